package io.rebalance.core.redis;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.UnifiedJedis;

/**
 * What a Redis keeps of the run's state when it restarts or runs short of memory, from {@code INFO} (which managed
 * services answer where {@code CONFIG GET} is disabled). The cutover's route, journal and token counter live in
 * Redis: a restart without an append-only file, or an eviction, loses them (docs/redis.md).
 *
 * @param aof whether the append-only file is on ({@code aof_enabled:1}): a restart loses at most the last second
 * @param evictionPolicy {@code maxmemory_policy}; only {@code noeviction} never drops a key to make room
 * @param replicas connected replicas
 */
public record RedisFitness(boolean aof, String evictionPolicy, int replicas) {

    /** On a Redis Cluster, the weakest primary's: every primary holds some of the run's keys. */
    public static RedisFitness of(UnifiedJedis redis) {
        if (!(redis instanceof RedisClusterClient cluster)) return of(info(redis::info));
        RedisFitness[] weakest = {null};
        ClusterPrimaries.forEach(cluster, j -> {
            RedisFitness f = of(info(j::info));
            weakest[0] = weakest[0] == null ? f : weakest[0].weaker(f);
        });
        if (weakest[0] == null) throw new IllegalStateException("the cluster's client knows no primary node");
        return weakest[0];
    }

    private static Map<String, String> info(Function<String, String> section) {
        Map<String, String> info = new HashMap<>();
        for (String name : new String[] {"persistence", "memory", "replication"})
            info.putAll(parse(section.apply(name)));
        return info;
    }

    private RedisFitness weaker(RedisFitness o) {
        return new RedisFitness(
                aof && o.aof,
                "noeviction".equals(evictionPolicy) ? o.evictionPolicy : evictionPolicy,
                Math.min(replicas, o.replicas));
    }

    static RedisFitness of(Map<String, String> info) {
        return new RedisFitness(
                "1".equals(info.get("aof_enabled")),
                info.getOrDefault("maxmemory_policy", "unknown"),
                Integer.parseInt(info.getOrDefault("connected_slaves", "0")));
    }

    static Map<String, String> parse(String info) {
        Map<String, String> out = new HashMap<>();
        for (String line : info.split("\r?\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && !line.startsWith("#"))
                out.put(line.substring(0, colon), line.substring(colon + 1).trim());
        }
        return out;
    }

    /** Empty when Redis never evicts a key; otherwise what is wrong and how to fix it. */
    public Optional<String> evictionProblem() {
        if ("noeviction".equals(evictionPolicy)) return Optional.empty();
        return Optional.of("Redis may evict keys to make room (maxmemory-policy " + evictionPolicy
                + "); fix: `CONFIG SET" + " maxmemory-policy noeviction` and the same in redis.conf (docs/redis.md)");
    }
}
