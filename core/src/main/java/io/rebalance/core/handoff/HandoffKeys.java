package io.rebalance.core.handoff;

/**
 * The Redis keys through which the cutover and the tail process hand over (ADR 7), under the run's prefix and next to
 * the tail's own {@code cdc:} keys.
 */
public record HandoffKeys(String prefix) {
    /** Hash: the cutover's request that the forward tail hold at a WAL position (id, lsn, requested_ms). */
    public String hold() {
        return prefix + "cdc:hold";
    }

    /** Hash: the forward tail's acknowledgement of a hold request (id, applied_lsn, acked_ms). */
    public String held() {
        return prefix + "cdc:held";
    }

    /** Hash: rollback's request for a reverse round that reads every shard to its end (id, requested_ms). */
    public String reverseDrain() {
        return prefix + "cdc:reverse:drain";
    }

    /** Hash: the reverse stream's state, lag, counters and the last drain it answered, written every round. */
    public String reverseStatus() {
        return prefix + "cdc:reverse";
    }

    /** Hash: the reverse stream's position per DynamoDB Streams shard (sequence number, or END once closed and read). */
    public String reverseShards() {
        return prefix + "cdc:reverse:shards";
    }
}
