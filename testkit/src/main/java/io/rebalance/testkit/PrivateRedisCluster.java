package io.rebalance.testkit;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;
import redis.clients.jedis.Jedis;

/**
 * A Redis Cluster of a test's own: {@code primaries} primaries (each with {@code replicasEach} replicas) of the
 * machine's {@code redis-server} on loopback ports, joined by {@code redis-cli --cluster create}, as an operator
 * would. {@link #url} lists every node as seeds ({@code redis.mode: cluster}). Closing stops every node and removes
 * its files.
 */
public final class PrivateRedisCluster implements AutoCloseable {
    public final String url;
    public final List<PrivateRedis> nodes;

    private PrivateRedisCluster(List<PrivateRedis> nodes) {
        this.nodes = nodes;
        this.url = "redis://" + nodes.stream().map(n -> "127.0.0.1:" + n.port()).collect(Collectors.joining(","));
    }

    /** @param args more server arguments for every node, e.g. {@code "--appendonly", "no"} */
    public static PrivateRedisCluster start(int primaries, int replicasEach, String... args) throws Exception {
        List<PrivateRedis> nodes = new ArrayList<>();
        PrivateRedisCluster cluster = null;
        try {
            for (int i = 0; i < primaries * (1 + replicasEach); i++) {
                List<String> a = new ArrayList<>(List.of(
                        "--cluster-enabled", "yes",
                        "--cluster-config-file", "nodes.conf",
                        "--cluster-node-timeout", "2000"));
                a.addAll(List.of(args));
                nodes.add(PrivateRedis.startOn(PrivateRedis.freePort(true), a.toArray(String[]::new)));
            }
            cluster = new PrivateRedisCluster(List.copyOf(nodes));
            List<String> create = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
            for (PrivateRedis n : nodes) create.add("127.0.0.1:" + n.port());
            create.addAll(List.of("--cluster-replicas", Integer.toString(replicasEach), "--cluster-yes"));
            Process p = new ProcessBuilder(create).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("redis-cli --cluster create failed: " + out);
            }
            cluster.awaitOk();
            return cluster;
        } catch (Exception | Error e) {
            if (cluster != null) cluster.close();
            else for (PrivateRedis n : nodes) n.close();
            throw e;
        }
    }

    /** Waits until every live node says {@code cluster_state:ok}: all 16384 slots served. */
    public void awaitOk() {
        Awaitility.await()
                .atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(100))
                .until(() -> nodes.stream().filter(PrivateRedis::alive).allMatch(PrivateRedisCluster::ok));
    }

    private static boolean ok(PrivateRedis node) {
        try (Jedis j = new Jedis("127.0.0.1", node.port())) {
            return j.clusterInfo().contains("cluster_state:ok");
        } catch (RuntimeException notYet) {
            return false;
        }
    }

    @Override
    public void close() throws Exception {
        Exception first = null;
        for (PrivateRedis n : nodes) {
            try {
                n.close();
            } catch (Exception e) {
                if (first == null) first = e;
            }
        }
        if (first != null) throw first;
    }
}
