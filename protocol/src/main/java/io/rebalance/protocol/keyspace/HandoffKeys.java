package io.rebalance.protocol.keyspace;

/**
 * The keys through which the cutover and the tail process hand over (ADR 7), under the tail's hash tag
 * {@code {cdc}} so the key log's script touches keys of one Redis Cluster slot. Reset group: {@link ResetGroup#TAIL}.
 * A table moved part by part has a hold, a key log and a record of bypassing writes per part ({@link #part}); the
 * reverse stream's keys stay the table's.
 */
public final class HandoffKeys {
    private final String prefix;
    /** Empty for the whole table; {@code :<part>} for a part's keys. */
    private final String part;

    HandoffKeys(String prefix) {
        this(prefix, "");
    }

    private HandoffKeys(String prefix, String part) {
        this.prefix = prefix;
        this.part = part;
    }

    /** The keys of part {@code name} of the table (ADR 20): its own hold, key log and bypassing writes. */
    public HandoffKeys part(String name) {
        return new HandoffKeys(prefix, ":" + name);
    }

    private String key(String name) {
        return TailKeys.key(prefix, name);
    }

    /** Hash: the cutover's request that the forward tail hold at a WAL position (id, lsn, requested_ms). */
    public String hold() {
        return key("hold" + part);
    }

    /** Hash: the forward tail's acknowledgement of a hold request (id, applied_lsn, acked_ms). */
    public String held() {
        return key("held" + part);
    }

    /** Hash: rollback's request for a reverse round that reads every shard to its end (id, requested_ms). */
    public String reverseDrain() {
        return key("reverse:drain");
    }

    /** Hash: the reverse stream's state, lag, counters and the last drain it answered, written every round. */
    public String reverseStatus() {
        return key("reverse");
    }

    /** Hash: the reverse stream's position per DynamoDB Streams shard (sequence number, or END once closed and read). */
    public String reverseShards() {
        return key("reverse:shards");
    }

    /** String: the generation the forward tail logs the keys it writes under, while a cutover wants them (KeyLog). */
    public String keyLog() {
        return key("keylog" + part);
    }

    /** String: the generation the forward tail last logged under, written inside its apply lock. */
    public String keyLogSeen() {
        return key("keylog" + part + ":seen");
    }

    /** Set: the keys the forward tail wrote under generation {@code gen}. */
    public String keyLogKeys(String gen) {
        return keyLogKeysPrefix() + gen;
    }

    /** What {@link #keyLogKeys} puts before the generation: its script names the set from the generation it reads. */
    public String keyLogKeysPrefix() {
        return key("keylog" + part + ":keys:");
    }

    /**
     * Hash: the keys of changes the held forward tail passed over that the reverse stream did not make (writes that
     * bypassed the Postgres fence), each with the WAL position of its last such change (BypassedWrites).
     */
    public String bypassed() {
        return key("bypassed" + part);
    }

    /** String: how many such changes came past the hash's cap, their keys not kept. */
    public String bypassedOverflow() {
        return key("bypassed" + part + ":overflow");
    }
}
