package io.rebalance.protocol.handoff;

import io.rebalance.protocol.HashFields;
import io.rebalance.protocol.keyspace.HandoffKeys;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import redis.clients.jedis.UnifiedJedis;

/**
 * The reverse stream's status ({@code <prefix>{cdc}:reverse}): written by the tail's reverse stream every round and
 * by rollback's drain answer, read by the cutover, rollback and {@code rebalance status}. The one class that knows
 * the hash's fields.
 */
public final class ReverseStatus {
    /** A round read every shard it could and wrote what it read. */
    public static final String STREAMING = "streaming";
    /** Its records wait for the forward tail to hold (they are neither written nor passed over). */
    public static final String WAITING = "waiting";
    /** A round failed; the error and since when are in the report. */
    public static final String FAILING = "failing";

    private final UnifiedJedis redis;
    private final String key;

    public ReverseStatus(UnifiedJedis redis, HandoffKeys keys) {
        this.redis = redis;
        this.key = keys.reverseStatus();
    }

    /**
     * One read of the status.
     *
     * @param state {@code streaming}, {@code waiting}, {@code failing}, or what the stream published when it had
     *     nothing to read ({@code off}, {@code closed})
     * @param gap "" or the shard and position after which records passed the stream's retention unread
     * @param failingSinceMs when the rounds began to fail, 0 while they do not
     * @param drainedId the last drain request a round answered, "" for none
     */
    public record Report(
            String state,
            long lagMs,
            long applied,
            long skipped,
            long updatedMs,
            String lastError,
            String waitingFor,
            String gap,
            long failingSinceMs,
            String drainedId) {
        static Report of(Map<String, String> h) {
            return new Report(
                    h.getOrDefault("state", ""),
                    HashFields.number(h, "lag_ms", 0),
                    HashFields.number(h, "applied", 0),
                    HashFields.number(h, "skipped", 0),
                    HashFields.number(h, "updated_ms", 0),
                    h.getOrDefault("last_error", ""),
                    h.getOrDefault("waiting_for", ""),
                    h.getOrDefault("gap", ""),
                    HashFields.number(h, "failing_since_ms", 0),
                    h.getOrDefault("drained_id", ""));
        }
    }

    /** @return the status, or empty when no reverse stream has reported */
    public Optional<Report> read() {
        Map<String, String> h = redis.hgetAll(key);
        return h.isEmpty() ? Optional.empty() : Optional.of(Report.of(h));
    }

    /** A round that ended without an error: clears the last failure. */
    public void round(String state, long lagMs, long applied, long skipped, int shards, String waitingFor) {
        Map<String, String> f = new LinkedHashMap<>();
        f.put("state", state);
        f.put("lag_ms", Long.toString(lagMs));
        f.put("applied", Long.toString(applied));
        f.put("skipped", Long.toString(skipped));
        f.put("shards", Integer.toString(shards));
        f.put("updated_ms", Long.toString(System.currentTimeMillis()));
        f.put("last_error", "");
        f.put("waiting_for", waitingFor);
        redis.hset(key, f);
        redis.hdel(key, "failing_since_ms");
    }

    /**
     * A round still under way: it is alive and how far it got, its state unchanged until it ends. A round may read for
     * longer than a rollback's freshness limit (a backlog after the flip, a slow DynamoDB): without this its report
     * would age as if nobody ran the stream.
     */
    public void alive(long applied, long skipped) {
        redis.hset(
                key,
                Map.of(
                        "applied", Long.toString(applied),
                        "skipped", Long.toString(skipped),
                        "updated_ms", Long.toString(System.currentTimeMillis())));
    }

    /**
     * A round that failed: the state says {@code failing}, with the error and since when, and the report is fresh,
     * so status and a rollback's refusal name the error instead of taking the stream for idle or gone.
     */
    public void failed(String error) {
        long now = System.currentTimeMillis();
        redis.hsetnx(key, "failing_since_ms", Long.toString(now));
        redis.hset(key, Map.of("state", FAILING, "last_error", error, "updated_ms", Long.toString(now)));
    }

    /** Records that the shard's records after {@code position} passed the stream's retention unread. */
    public void gap(String shardId, String position) {
        redis.hset(key, "gap", shardId + " after " + position);
    }

    /** The DynamoDB stream the shard positions belong to, or null before the first. */
    public String streamArn() {
        return redis.hget(key, "stream_arn");
    }

    public void streamArn(String arn) {
        redis.hset(key, "stream_arn", arn);
    }

    /** Rollback's drain request {@code id} was answered by a complete round. */
    void drained(String id) {
        redis.hset(key, Map.of("drained_id", id, "drained_ms", Long.toString(System.currentTimeMillis())));
    }

    boolean answered(String id) {
        return id.equals(redis.hget(key, "drained_id"));
    }
}
