package io.rebalance.protocol.handoff;

import io.rebalance.protocol.keyspace.HandoffKeys;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import redis.clients.jedis.UnifiedJedis;

/**
 * Rollback's handshake with the reverse stream (ADR 7, point 6). Rollback closes the DynamoDB fence, then asks for a
 * drain; the reverse stream answers only after a round that began after the request and read every shard to its end
 * without an error. An answer says only that the records delivered by then are in Postgres: DynamoDB Streams may
 * deliver a record later, so the rollback compares the keys written since the flip and asks again for those that
 * still differ (ADR 9).
 */
public final class ReverseDrain {
    private final UnifiedJedis redis;
    private final HandoffKeys keys;
    private final ReverseStatus status;

    public ReverseDrain(UnifiedJedis redis, HandoffKeys keys) {
        this.redis = redis;
        this.keys = keys;
        this.status = new ReverseStatus(redis, keys);
    }

    /** @return the request's id, which the answer names */
    public String request() {
        String id = UUID.randomUUID().toString();
        redis.hset(keys.reverseDrain(), Map.of("id", id, "requested_ms", Long.toString(System.currentTimeMillis())));
        return id;
    }

    /** @return true once a round answered {@code id}; false when {@code timeout} passed first */
    public boolean awaitDrained(String id, Duration timeout) throws InterruptedException {
        return Answer.await(() -> status.answered(id), timeout);
    }

    /** The reverse stream, at the start of a round: the request this round can answer, or null. */
    public String pending() {
        return redis.hget(keys.reverseDrain(), "id");
    }

    /** The reverse stream, after a complete round that began with {@code id} pending. */
    public void answer(String id) {
        status.drained(id);
    }
}
