package io.rebalance.protocol.handoff;

import io.rebalance.protocol.keyspace.HandoffKeys;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import redis.clients.jedis.UnifiedJedis;

/**
 * Rollback's handshake with the reverse stream (ADR 7, point 6). The reverse stream answers a request only after a
 * round that began after it and read every shard to its end without an error, and a pending request makes that round
 * list the stream's shards first. An answer says only that the records delivered by then are in Postgres: DynamoDB
 * Streams may deliver a record later. A rollback comparing every key ({@code --verify-all}) waits for answers between
 * comparisons; one comparing the logged keys only asks, after 250 ms of differences, so new shards are listed (ADR 9).
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
