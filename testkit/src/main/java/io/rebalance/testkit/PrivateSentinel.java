package io.rebalance.testkit;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;

/**
 * A Sentinel-managed Redis of a test's own: a primary, a replica of it, and one sentinel watching them under
 * {@link #MASTER} (quorum 1, down after 1 s), all the machine's {@code redis-server} on loopback ports. {@link #url}
 * names the sentinel ({@code redis.mode: sentinel}). {@link #killPrimary} is the failover: the sentinel promotes the
 * replica. Closing stops every process and removes its files.
 */
public final class PrivateSentinel implements AutoCloseable {
    public static final String MASTER = "rebalance-primary";

    public final String url;
    private final PrivateRedis first;
    private final PrivateRedis second;
    private final Process sentinel;
    private final Path dir;
    private final int sentinelPort;
    private PrivateRedis killed;

    private PrivateSentinel(PrivateRedis first, PrivateRedis second, Process sentinel, Path dir, int sentinelPort) {
        this.first = first;
        this.second = second;
        this.sentinel = sentinel;
        this.dir = dir;
        this.sentinelPort = sentinelPort;
        this.url = "redis://127.0.0.1:" + sentinelPort;
    }

    /** @param args more server arguments for the primary and the replica, e.g. {@code "--appendonly", "no"} */
    public static PrivateSentinel start(String... args) throws Exception {
        PrivateRedis primary = PrivateRedis.startOn(PrivateRedis.freePort(false), args);
        List<String> replicaArgs = new ArrayList<>(List.of(args));
        replicaArgs.addAll(List.of("--replicaof", "127.0.0.1", Integer.toString(primary.port())));
        PrivateRedis replica = null;
        Path dir = null;
        Process sentinel = null;
        try {
            replica = PrivateRedis.startOn(PrivateRedis.freePort(false), replicaArgs.toArray(String[]::new));
            dir = Files.createTempDirectory("rebalance-sentinel-");
            int port = PrivateRedis.freePort(false);
            Path conf = dir.resolve("sentinel.conf");
            Files.writeString(
                    conf,
                    String.join(
                            "\n",
                            "port " + port,
                            "bind 127.0.0.1",
                            "dir " + dir,
                            "sentinel monitor " + MASTER + " 127.0.0.1 " + primary.port() + " 1",
                            "sentinel down-after-milliseconds " + MASTER + " 1000",
                            "sentinel failover-timeout " + MASTER + " 10000",
                            ""));
            sentinel = new ProcessBuilder("redis-server", conf.toString(), "--sentinel")
                    .redirectErrorStream(true)
                    .redirectOutput(dir.resolve("sentinel.log").toFile())
                    .start();
            PrivateSentinel s = new PrivateSentinel(primary, replica, sentinel, dir, port);
            PrivateRedis r = replica;
            Awaitility.await() // the sentinel knows the primary and has found its replica
                    .atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> s.replicasSeen() == 1 && linked(r));
            return s;
        } catch (Exception | Error e) {
            if (sentinel != null) sentinel.destroyForcibly().waitFor();
            if (replica != null) replica.close();
            primary.close();
            if (dir != null) delete(dir);
            throw e;
        }
    }

    /** The primary the sentinel names now. */
    public HostAndPort primary() {
        try (Jedis j = new Jedis("127.0.0.1", sentinelPort)) {
            List<String> a = j.sentinelGetMasterAddrByName(MASTER);
            return new HostAndPort(a.get(0), Integer.parseInt(a.get(1)));
        }
    }

    /**
     * Kills the primary ({@code kill -9}) and waits until the sentinel has promoted the replica: a failover, with
     * whatever the replica had not received yet lost.
     *
     * @return the new primary
     */
    public HostAndPort killPrimary() throws Exception {
        HostAndPort was = primary();
        PrivateRedis dying = was.getPort() == first.port() ? first : second;
        dying.kill();
        killed = dying;
        Awaitility.await()
                .atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> !primary().equals(was) && role(primary()).equals("master"));
        return primary();
    }

    /**
     * Starts the node {@link #killPrimary} killed again; the sentinel makes it a replica of the new primary, as an
     * operator's replacement would be. Waits until the new primary counts it as a replica in sync.
     */
    public void restartKilled() throws Exception {
        killed.startAgain();
        HostAndPort now = primary();
        Awaitility.await()
                .atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> linked(killed) && connectedReplicas(now) >= 1);
    }

    private static int connectedReplicas(HostAndPort node) {
        try (Jedis j = new Jedis(node.getHost(), node.getPort())) {
            String info = j.info("replication");
            int at = info.indexOf("connected_slaves:");
            return at < 0
                    ? 0
                    : Integer.parseInt(
                            info.substring(at + 17, info.indexOf('\r', at)).trim());
        } catch (RuntimeException notYet) {
            return 0;
        }
    }

    private int replicasSeen() {
        try (Jedis j = new Jedis("127.0.0.1", sentinelPort)) {
            return j.sentinelReplicas(MASTER).size();
        } catch (RuntimeException notYet) {
            return -1;
        }
    }

    private static boolean linked(PrivateRedis replica) {
        try (Jedis j = new Jedis("127.0.0.1", replica.port())) {
            return j.info("replication").contains("master_link_status:up");
        } catch (RuntimeException notYet) {
            return false;
        }
    }

    private static String role(HostAndPort node) {
        try (Jedis j = new Jedis(node.getHost(), node.getPort())) {
            return j.role().get(0).toString();
        } catch (RuntimeException notYet) {
            return "";
        }
    }

    private static void delete(Path dir) throws Exception {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path f : files.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(f);
        }
    }

    @Override
    public void close() throws Exception {
        sentinel.destroy();
        if (!sentinel.waitFor(10, TimeUnit.SECONDS)) sentinel.destroyForcibly().waitFor();
        first.close();
        second.close();
        delete(dir);
    }
}
