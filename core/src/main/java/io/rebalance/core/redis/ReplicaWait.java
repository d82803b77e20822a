package io.rebalance.core.redis;

import java.time.Duration;
import java.util.Optional;
import redis.clients.jedis.AbstractPipeline;
import redis.clients.jedis.Response;
import redis.clients.jedis.UnifiedJedis;

/**
 * Waits, after a write a failover must not lose (the route), until a replica has it: {@code WAIT} counts the
 * replicas that acknowledged the writes of its own connection, and a pool spreads calls over connections, so this
 * writes once more on one connection and waits there. Replication is one ordered stream: a replica that has the
 * later write has the earlier one. Without replicas it does nothing (ADR 8).
 */
public final class ReplicaWait {
    /**
     * How long a route change waits for a replica: long enough for a healthy one, short against a lagging one, and
     * under the client's 5 s socket timeout, so Redis answers "none" before the client gives up on the reply.
     */
    public static final Duration TIMEOUT = Duration.ofSeconds(4);

    private final UnifiedJedis redis;
    private Boolean replicated;

    public ReplicaWait(UnifiedJedis redis) {
        this.redis = redis;
    }

    /**
     * Measures whether a replica acknowledges writes to {@code probeKey}'s node: one write there, then {@code WAIT 1}
     * on the same connection; the key is deleted again, so a check that refuses leaves nothing behind.
     *
     * @return how long the acknowledgment took, or empty when none acknowledged within {@link #TIMEOUT} (the caller
     *     knows from {@link RedisFitness} whether there are replicas to ask at all)
     */
    public Optional<Duration> probe(String probeKey) {
        long start = System.nanoTime();
        try (AbstractPipeline p = redis.pipelined()) {
            p.set(probeKey, Long.toString(System.currentTimeMillis()));
            Response<Long> acked = p.waitReplicas(probeKey, 1, TIMEOUT.toMillis());
            p.sync();
            return acked.get() >= 1 ? Optional.of(Duration.ofNanos(System.nanoTime() - start)) : Optional.empty();
        } finally {
            redis.del(probeKey);
        }
    }

    /**
     * @param key a key the protected write touched (so Redis Cluster waits on its node); it gets a field {@code
     *     replicated_ms}
     * @return true when a replica acknowledged, or when there are none to wait for
     */
    public boolean after(String key) {
        if (replicated == null) replicated = RedisFitness.of(redis).replicas() > 0; // once per command
        if (!replicated) return true;
        try (AbstractPipeline p = redis.pipelined()) {
            p.hset(key, "replicated_ms", Long.toString(System.currentTimeMillis()));
            Response<Long> acked = p.waitReplicas(key, 1, TIMEOUT.toMillis());
            p.sync();
            return acked.get() >= 1;
        }
    }
}
