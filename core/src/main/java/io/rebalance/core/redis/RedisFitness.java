package io.rebalance.core.redis;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
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

    public static RedisFitness of(UnifiedJedis redis) {
        Map<String, String> info = new HashMap<>();
        for (String section : new String[] {"persistence", "memory", "replication"})
            info.putAll(parse(redis.info(section)));
        return of(info);
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

    /** Empty when a restart keeps the data; otherwise what is wrong and how to fix it. */
    public Optional<String> persistenceProblem() {
        if (aof) return Optional.empty();
        return Optional.of(
                "Redis keeps no append-only file (aof_enabled:0), so a restart loses what it holds; fix: `CONFIG"
                        + " SET appendonly yes` and `appendonly yes` in redis.conf (docs/redis.md)");
    }

    /** Empty when Redis never evicts a key; otherwise what is wrong and how to fix it. */
    public Optional<String> evictionProblem() {
        if ("noeviction".equals(evictionPolicy)) return Optional.empty();
        return Optional.of("Redis may evict keys to make room (maxmemory-policy " + evictionPolicy
                + "); fix: `CONFIG SET" + " maxmemory-policy noeviction` and the same in redis.conf (docs/redis.md)");
    }
}
