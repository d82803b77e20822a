package io.rebalance.protocol.keyspace;

/**
 * The change stream's keys, all under the hash tag {@code {cdc}} (with the hand-off's, {@link HandoffKeys}), so the
 * lease-checked offset save and the key log's script touch keys of one Redis Cluster slot. Reset group:
 * {@link ResetGroup#TAIL}.
 */
public final class TailKeys {
    /** The tag of every tail and hand-off key. */
    static final String TAG = "cdc";

    private final String prefix;

    TailKeys(String prefix) {
        this.prefix = prefix;
    }

    static String key(String prefix, String name) {
        return prefix + "{" + TAG + "}:" + name;
    }

    /** Hash: Debezium's source offsets (base64 key -> base64 value), written only by the lease holder. */
    public String offsets() {
        return key(prefix, "offsets");
    }

    /** String with TTL: the member of the one active tail's lease. */
    public String lease() {
        return key(prefix, "lease");
    }

    /** Hash: applied LSN, lag, events/s, retained WAL, written every second by the active tail. */
    public String status() {
        return key(prefix, "status");
    }

    /** Sorted set: every tail process, active or standing by, scored by when it was last seen (ms). */
    public String members() {
        return key(prefix, "members");
    }

    /** Capped list of the tail's lag and retained WAL every 10 s over the last hour, newest first. */
    public String history() {
        return key(prefix, "history");
    }

    /** List: ids of repair requests (verify --repair while a tail runs) waiting for the tail. */
    public String repairQueue() {
        return key(prefix, "repair");
    }

    /** List: ids of the repair requests the active tail has taken and not yet answered. */
    public String repairing() {
        return key(prefix, "repairing");
    }

    /** List: the keys of one repair request. */
    public String repairRequest(String id) {
        return key(prefix, "repair:" + id);
    }

    /** List: the tail's answer to one repair request, how many items it put or deleted. */
    public String repairAnswer(String id) {
        return key(prefix, "repaired:" + id);
    }

    /** Set: keys of {@code slot} the tail wrote while the backfill of that slot was not finished. */
    public String touched(String slot) {
        return key(prefix, "touched:" + slot);
    }

    /** Set: the slots (or the tail's unknown-slot bucket) that have a {@link #touched} set. */
    public String touchedSlots() {
        return key(prefix, "touched");
    }

    /** Hash: slot -> WAL position of the last change the tail applied in it (ChangedSlots). */
    public String changedSlots() {
        return key(prefix, "changed");
    }

    /** Set: the partitions of a partitioned source table the tail has seen (PartitionWatch). */
    public String partitions() {
        return key(prefix, "partitions");
    }

    static boolean owns(String name) {
        // cdc:... are the untagged names of builds before the tag: reset still finds and deletes them
        return Keyspace.afterTag(name, TAG) != null || name.startsWith("cdc:");
    }
}
