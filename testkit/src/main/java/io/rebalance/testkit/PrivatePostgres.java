package io.rebalance.testkit;

import io.rebalance.local.LocalServices;
import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.testcontainers.postgresql.PostgreSQLContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * A Postgres cluster of a test's own, on a loopback port, for settings the shared one must not have (a small
 * {@code max_slot_wal_keep_size} that invalidates slots, say), so other tests' slots are never at risk. It is made with
 * the machine's {@code initdb} and {@code pg_ctl} (as the postgres user when run as root), or, where Postgres is not
 * installed but a Docker engine runs, as a container. Closing stops it and removes its files.
 */
public final class PrivatePostgres implements AutoCloseable {
    public final String jdbcUrl;
    private final Path dir;
    private final PostgreSQLContainer container;
    /** With {@link #startWithTls}: the server's self-signed certificate, its own root (for {@code sslrootcert}). */
    private Path certificate;

    private PrivatePostgres(String jdbcUrl, Path dir, PostgreSQLContainer container) {
        this.jdbcUrl = jdbcUrl;
        this.dir = dir;
        this.container = container;
    }

    /** @param settings server settings as {@code name=value}, besides {@code wal_level=logical} */
    public static PrivatePostgres start(String... settings) throws Exception {
        Path bin = binDir();
        if (bin == null) {
            if (!LocalServices.dockerAvailable()) {
                throw new IllegalStateException("a private Postgres needs initdb (Debian package postgresql) or a"
                        + " Docker engine; neither is here");
            }
            List<String> cmd = new ArrayList<>(List.of("postgres", "-c", "wal_level=logical"));
            for (String s : settings) cmd.addAll(List.of("-c", s));
            PostgreSQLContainer pg = new PostgreSQLContainer(DockerImageName.parse(LocalServices.POSTGRES_IMAGE))
                    .withDatabaseName("postgres")
                    .withUsername("postgres")
                    .withPassword("postgres")
                    .withCommand(cmd.toArray(String[]::new));
            pg.start();
            return new PrivatePostgres(
                    LocalServices.withPassword(pg.getJdbcUrl(), pg.getPassword()) + "&user=postgres", null, pg);
        }
        Path dir = Files.createTempDirectory("rebalance-pg-");
        boolean root = "root".equals(System.getProperty("user.name"));
        if (root) run(List.of("chown", "postgres:postgres", dir.toString()));
        run(asPostgres(
                root,
                bin.resolve("initdb").toString(),
                "-D",
                dir.resolve("data").toString(),
                "-A",
                "trust",
                "-U",
                "postgres",
                "--no-sync"));
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        StringBuilder opts = new StringBuilder(
                "-p " + port + " -k " + dir + " -c listen_addresses=127.0.0.1" + " -c wal_level=logical -c fsync=off");
        for (String s : settings) opts.append(" -c ").append(s);
        return started(root, bin, dir, port, opts.toString());
    }

    /**
     * A hot standby of this cluster: a base backup streaming its WAL ({@code pg_basebackup -R}), on a loopback port
     * of its own, read-only and replaying. Needs the machine's initdb; close it before this one.
     */
    public PrivatePostgres standby() throws Exception {
        if (dir == null) throw new IllegalStateException("a standby needs the machine's Postgres binaries");
        Path bin = binDir();
        Path standbyDir = Files.createTempDirectory("rebalance-pg-standby-");
        boolean root = "root".equals(System.getProperty("user.name"));
        if (root) run(List.of("chown", "postgres:postgres", standbyDir.toString()));
        String primaryPort = jdbcUrl.replaceAll(".*127\\.0\\.0\\.1:(\\d+)/.*", "$1");
        run(asPostgres(
                root,
                bin.resolve("pg_basebackup").toString(),
                "-h",
                "127.0.0.1",
                "-p",
                primaryPort,
                "-U",
                "postgres",
                "-D",
                standbyDir.resolve("data").toString(),
                "-R",
                "-X",
                "stream",
                "--no-sync"));
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        return started(
                root,
                bin,
                standbyDir,
                port,
                "-p " + port + " -k " + standbyDir + " -c listen_addresses=127.0.0.1 -c hot_standby=on");
    }

    /** Starts the cluster in {@code dir}/data with {@code opts}, logging to {@code dir}/log, and waits for it. */
    private static PrivatePostgres started(boolean root, Path bin, Path dir, int port, String opts) throws Exception {
        run(asPostgres(
                root,
                bin.resolve("pg_ctl").toString(),
                "-D",
                dir.resolve("data").toString(),
                "-o",
                opts,
                "-l",
                dir.resolve("log").toString(),
                "-w",
                "start"));
        return new PrivatePostgres("jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=postgres", dir, null);
    }

    /**
     * Like {@link #start}, with TLS on (connections may use it or not) under a self-signed certificate for
     * 127.0.0.1 made here with openssl. Needs the machine's initdb: the certificate lives outside a container.
     */
    public static PrivatePostgres startWithTls(String... settings) throws Exception {
        Path certs = Files.createTempDirectory("rebalance-pg-tls-");
        Path key = certs.resolve("server.key");
        Path crt = certs.resolve("server.crt");
        run(List.of(
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-keyout",
                key.toString(),
                "-out",
                crt.toString(),
                "-days",
                "2",
                "-subj",
                "/CN=127.0.0.1",
                "-addext",
                "subjectAltName=IP:127.0.0.1"));
        run(List.of("chmod", "600", key.toString()));
        if ("root".equals(System.getProperty("user.name")))
            run(List.of("chown", "-R", "postgres:postgres", certs.toString()));
        List<String> all = new ArrayList<>(List.of(settings));
        all.addAll(List.of("ssl=on", "ssl_cert_file=" + crt, "ssl_key_file=" + key));
        PrivatePostgres pg;
        try {
            pg = start(all.toArray(String[]::new));
        } catch (Exception e) {
            delete(certs);
            throw e;
        }
        pg.certificate = crt;
        return pg;
    }

    /**
     * From now on TCP connections authenticate with a password (SCRAM), as on a cloud's Postgres: the user postgres
     * gets {@code password}. Needs the machine's initdb (the cluster's files are here).
     */
    public void requirePassword(String password) throws Exception {
        if (dir == null) throw new IllegalStateException("password authentication needs the machine's initdb");
        try (var c = DriverManager.getConnection(jdbcUrl);
                var st = c.createStatement()) {
            st.execute("ALTER ROLE postgres PASSWORD '" + password.replace("'", "''") + "'");
            Files.writeString(
                    dir.resolve("data").resolve("pg_hba.conf"),
                    "local all all trust\n"
                            + "host all all 127.0.0.1/32 scram-sha-256\n"
                            + "host replication all 127.0.0.1/32 scram-sha-256\n");
            st.execute("SELECT pg_reload_conf()");
        }
    }

    /** The certificate the server presents, for a client's {@code sslrootcert}. */
    public Path certificate() {
        if (certificate == null) throw new IllegalStateException("started without TLS");
        return certificate;
    }

    private static void delete(Path root) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
    }

    private static Path binDir() throws IOException {
        Path root = Path.of("/usr/lib/postgresql");
        if (!Files.isDirectory(root)) return null;
        try (Stream<Path> versions = Files.list(root)) {
            return versions.map(v -> v.resolve("bin"))
                    .filter(b -> Files.isExecutable(b.resolve("initdb")))
                    .max(Comparator.comparing(
                            b -> Integer.parseInt(b.getParent().getFileName().toString())))
                    .orElse(null);
        }
    }

    private static List<String> asPostgres(boolean root, String... cmd) {
        List<String> out = new ArrayList<>();
        if (root) out.addAll(List.of("runuser", "-u", "postgres", "--"));
        out.addAll(List.of(cmd));
        return out;
    }

    private static void run(List<String> cmd) throws Exception {
        File log = File.createTempFile("rebalance-pg-cmd", ".log");
        try {
            Process p = new ProcessBuilder(cmd)
                    .redirectErrorStream(true)
                    .redirectOutput(log)
                    .start();
            if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                throw new IllegalStateException(String.join(" ", cmd) + " failed: " + Files.readString(log.toPath()));
            }
        } finally {
            log.delete();
        }
    }

    @Override
    public void close() throws Exception {
        if (container != null) {
            container.stop();
            return;
        }
        Path bin = binDir();
        boolean root = "root".equals(System.getProperty("user.name"));
        try {
            run(asPostgres(
                    root,
                    bin.resolve("pg_ctl").toString(),
                    "-D",
                    dir.resolve("data").toString(),
                    "-m",
                    "immediate",
                    "-w",
                    "stop"));
        } finally {
            delete(dir);
            if (certificate != null) delete(certificate.getParent());
        }
    }
}
