package io.rebalance.testkit;

import io.rebalance.core.redis.RedisConnector;
import io.rebalance.local.LocalServices;
import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.utility.DockerImageName;
import redis.clients.jedis.UnifiedJedis;

/**
 * A Redis of a test's own on a loopback port, for settings the shared one must not have (no append-only file, an
 * evicting policy), so the shared one is never at risk. It is the machine's {@code redis-server} as a child process,
 * or, where Redis is not installed but a Docker engine runs, a container. Closing stops it and removes its files.
 */
public final class PrivateRedis implements AutoCloseable {
    public final String url;
    private Process process;
    private final Path dir;
    private final GenericContainer<?> container;
    private final List<String> command;

    private PrivateRedis(String url, Process process, Path dir, GenericContainer<?> container, List<String> command) {
        this.url = url;
        this.process = process;
        this.dir = dir;
        this.container = container;
        this.command = command;
    }

    /**
     * Stops the server and starts it again on the same port, as a crash and restart would: started without
     * persistence ({@code "--appendonly", "no", "--save", ""}), it comes back empty. Clients reconnect on their own.
     */
    public void restart() throws Exception {
        if (container != null) {
            container
                    .getDockerClient()
                    .restartContainerCmd(container.getContainerId())
                    .exec();
            awaitAnswers();
        } else {
            kill();
            startAgain();
        }
    }

    /** Kills the server ({@code kill -9}), for an outage of the test's length; {@link #startAgain} ends it. */
    public void kill() throws Exception {
        if (container != null) {
            container
                    .getDockerClient()
                    .killContainerCmd(container.getContainerId())
                    .exec();
        } else {
            process.destroyForcibly().waitFor();
        }
    }

    /**
     * Freezes the server ({@code kill -STOP}): its connections stay open and nothing answers, as a host that stalls;
     * {@link #resume} thaws it.
     */
    public void pause() throws Exception {
        signal("STOP");
    }

    public void resume() throws Exception {
        signal("CONT");
    }

    private void signal(String name) throws Exception {
        if (process == null) throw new IllegalStateException("pausing works on a child process only");
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).start();
        if (kill.waitFor() != 0) throw new IllegalStateException("kill -" + name + " failed");
    }

    /** Starts the killed server again on the same port, from its files (its append-only file, if it keeps one). */
    public void startAgain() throws Exception {
        if (container != null) {
            container
                    .getDockerClient()
                    .startContainerCmd(container.getContainerId())
                    .exec();
        } else {
            process = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(
                            dir.resolve("redis.log").toFile()))
                    .start();
        }
        awaitAnswers();
    }

    private void awaitAnswers() {
        Awaitility.await()
                .atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> answers(url));
    }

    /** @param args server arguments, e.g. {@code "--appendonly", "no"} */
    public static PrivateRedis start(String... args) throws Exception {
        if (!onPath("redis-server")) {
            if (!LocalServices.dockerAvailable()) {
                throw new IllegalStateException("a private Redis needs redis-server (Debian package redis-server) or a"
                        + " Docker engine; neither is here");
            }
            List<String> cmd = new ArrayList<>(List.of("redis-server"));
            cmd.addAll(List.of(args));
            GenericContainer<?> c = new GenericContainer<>(DockerImageName.parse(LocalServices.REDIS_IMAGE))
                    .withExposedPorts(6379)
                    .withCommand(cmd.toArray(String[]::new));
            c.start();
            return new PrivateRedis("redis://" + c.getHost() + ":" + c.getMappedPort(6379), null, null, c, cmd);
        }
        return startOn(freePort(false), args);
    }

    /** A server on {@code port}, which a caller chose (a cluster node's, whose bus port must be free too). */
    static PrivateRedis startOn(int port, String... args) throws Exception {
        if (!onPath("redis-server")) {
            throw new IllegalStateException("a Redis Cluster or Sentinel for tests needs redis-server (Debian package"
                    + " redis-server; scripts/services.sh installs it)");
        }
        Path dir = Files.createTempDirectory("rebalance-redis-");
        List<String> cmd = new ArrayList<>(List.of(
                "redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1", "--dir", dir.toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("redis.log").toFile())
                .start();
        PrivateRedis r = new PrivateRedis("redis://127.0.0.1:" + port, p, dir, null, cmd);
        try {
            Awaitility.await()
                    .atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> !p.isAlive() || answers(r.url));
        } catch (ConditionTimeoutException e) {
            // reported below with the server's log
        }
        if (!p.isAlive() || !answers(r.url)) {
            String log = Files.readString(dir.resolve("redis.log"));
            r.close();
            throw new IllegalStateException("redis-server did not come up: " + log);
        }
        return r;
    }

    /**
     * A free loopback port; with {@code bus}, one whose cluster bus port (10000 above it) is free and valid as well.
     */
    static int freePort(boolean bus) throws Exception {
        for (int attempt = 0; attempt < 100; attempt++) {
            try (ServerSocket s = new ServerSocket(0)) {
                int port = s.getLocalPort();
                if (!bus) return port;
                if (port + 10_000 > 65_535) continue;
                try (ServerSocket b = new ServerSocket(port + 10_000)) {
                    return port;
                } catch (IOException taken) {
                    // try another
                }
            }
        }
        throw new IllegalStateException("no free port pair for a cluster node after 100 tries");
    }

    public int port() {
        return Integer.parseInt(url.substring(url.lastIndexOf(':') + 1));
    }

    /** Whether the server process runs (false once killed). */
    public boolean alive() {
        return container != null ? container.isRunning() : process.isAlive();
    }

    static boolean onPath(String binary) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(d, binary))) return true;
        }
        return false;
    }

    private static boolean answers(String url) {
        try (UnifiedJedis j = RedisConnector.connect(url, 1)) {
            return "PONG".equals(j.ping());
        } catch (RuntimeException notYet) {
            // a server started with --requirepass answers, if only to ask for the password
            return String.valueOf(notYet.getMessage()).contains("NOAUTH");
        }
    }

    @Override
    public void close() throws Exception {
        if (container != null) container.stop();
        if (process != null) {
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS))
                process.destroyForcibly().waitFor();
        }
        if (dir != null) {
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path f : files.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(f);
            }
        }
    }
}
