package io.rebalance.local;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.util.function.Consumer;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.postgresql.PostgreSQLContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * Finds Postgres and Redis for the demo: the configured addresses when something listens there, otherwise
 * containers started with Testcontainers when a Docker engine runs, otherwise a clear error saying how to start
 * them. Containers live as long as this process.
 */
public final class LocalServices {
    public static final String POSTGRES_IMAGE = "postgres:16-alpine";
    public static final String REDIS_IMAGE = "redis:7-alpine";

    private LocalServices() {}

    /** A JDBC URL that answers: {@code jdbcUrl} itself, or a Postgres container's (with wal_level=logical). */
    public static String postgres(String jdbcUrl, Consumer<String> say) {
        URI uri = URI.create(jdbcUrl.substring("jdbc:".length()));
        if (listening(uri.getHost(), uri.getPort() < 0 ? 5432 : uri.getPort())) return jdbcUrl;
        requireDocker("Postgres", jdbcUrl);
        say.accept("Postgres is not at " + uri.getHost() + ":" + uri.getPort() + "; starting " + POSTGRES_IMAGE
                + " with Testcontainers");
        PostgreSQLContainer pg = startPostgresContainer();
        return withPassword(pg.getJdbcUrl(), pg.getPassword());
    }

    /** A Redis URL that answers: {@code url} itself, or a Redis container's. */
    public static String redis(String url, Consumer<String> say) {
        URI uri = URI.create(url);
        if (listening(uri.getHost(), uri.getPort() < 0 ? 6379 : uri.getPort())) return url;
        requireDocker("Redis", url);
        say.accept("Redis is not at " + uri.getHost() + ":" + uri.getPort() + "; starting " + REDIS_IMAGE
                + " with Testcontainers");
        GenericContainer<?> redis = startRedisContainer();
        return "redis://" + redis.getHost() + ":" + redis.getMappedPort(6379);
    }

    /** Container Postgres wants a password; carried in the URL so the rest of the config stays as it was. */
    public static String withPassword(String jdbcUrl, String password) {
        return jdbcUrl + (jdbcUrl.contains("?") ? "&" : "?") + "password=" + password;
    }

    public static boolean dockerAvailable() {
        try {
            return DockerClientFactory.instance().isDockerAvailable();
        } catch (RuntimeException | LinkageError e) {
            return false;
        }
    }

    @SuppressWarnings("resource") // lives until the JVM exits; Testcontainers' reaper removes it
    public static PostgreSQLContainer startPostgresContainer() {
        PostgreSQLContainer pg = new PostgreSQLContainer(DockerImageName.parse(POSTGRES_IMAGE))
                .withDatabaseName("postgres")
                .withUsername("postgres")
                .withPassword("postgres")
                .withCommand(
                        "postgres",
                        "-c",
                        "wal_level=logical",
                        "-c",
                        "max_replication_slots=20",
                        "-c",
                        "max_wal_senders=20");
        pg.start();
        return pg;
    }

    @SuppressWarnings("resource")
    public static GenericContainer<?> startRedisContainer() {
        GenericContainer<?> redis = new GenericContainer<>(DockerImageName.parse(REDIS_IMAGE))
                .withExposedPorts(6379)
                // the cutover refuses a Redis that could lose its route on a restart (docs/redis.md)
                .withCommand("redis-server", "--appendonly", "yes", "--maxmemory-policy", "noeviction");
        redis.start();
        return redis;
    }

    private static void requireDocker(String what, String where) {
        if (!dockerAvailable()) {
            throw new IllegalStateException(
                    what + " is not reachable at " + where + " and no Docker engine runs to start" + " one; start "
                            + what + " locally (scripts/services.sh does it on Debian) or point the config at one");
        }
    }

    static boolean listening(String host, int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(host, port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
