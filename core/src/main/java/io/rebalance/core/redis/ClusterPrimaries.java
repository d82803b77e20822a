package io.rebalance.core.redis;

import java.util.function.Consumer;
import redis.clients.jedis.Connection;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.util.Pool;

/**
 * Each primary of a Redis Cluster in turn, as a plain connection: for what a cluster client does not spread over its
 * nodes (SCAN, INFO). Replicas are passed over: they hold their primary's keys again, perhaps some it deleted already.
 */
final class ClusterPrimaries {
    private ClusterPrimaries() {}

    static void forEach(RedisClusterClient cluster, Consumer<Jedis> primary) {
        for (Pool<Connection> node : cluster.getClusterNodes().values()) {
            try (Connection c = node.getResource()) {
                Jedis j = new Jedis(c);
                if ("master".equals(String.valueOf(j.role().get(0)))) primary.accept(j);
            }
        }
    }
}
