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

    /** String: the generation the forward tail logs the keys it writes under, while a cutover wants them (KeyLog). */
    public String keyLog() {
        return prefix + "cdc:keylog";
    }

    /** String: the generation the forward tail last logged under, written inside its apply lock. */
    public String keyLogSeen() {
        return prefix + "cdc:keylog:seen";
    }

    /** Set: the keys the forward tail wrote under generation {@code gen}. */
    public String keyLogKeys(String gen) {
        return keyLogKeysPrefix() + gen;
    }

    String keyLogKeysPrefix() {
        return prefix + "cdc:keylog:keys:";
    }
}
