package io.rebalance.cdc;

import io.rebalance.core.slot.Slot;

/** The Redis keys of the change stream, under the run's prefix (next to the mover's, see docs/cdc.md). */
public record TailKeys(String prefix) {
    /** Hash: Debezium's source offsets (base64 key -> base64 value), written only by the lease holder. */
    public String offsets() {
        return prefix + "cdc:offsets";
    }

    /** String with TTL: the owner id of the one active tail. */
    public String lease() {
        return prefix + "cdc:lease";
    }

    /** Hash: applied LSN, lag, events/s, retained WAL, written every second by the active tail. */
    public String status() {
        return prefix + "cdc:status";
    }

    /** List: ids of repair requests (verify --repair while a tail runs) waiting for the tail. */
    public String repairQueue() {
        return prefix + "cdc:repair";
    }

    /** List: ids of the repair requests the active tail has taken and not yet answered. */
    public String repairing() {
        return prefix + "cdc:repairing";
    }

    /** List: the keys of one repair request. */
    public String repairRequest(String id) {
        return prefix + "cdc:repair:" + id;
    }

    /** List: the tail's answer to one repair request, how many items it put or deleted. */
    public String repairAnswer(String id) {
        return prefix + "cdc:repaired:" + id;
    }

    /** Set: keys of {@code slot} the tail wrote while the backfill of that slot was not finished. */
    public String touched(String slot) {
        return prefix + "cdc:touched:" + slot;
    }

    public String touched(Slot slot) {
        return touched(slot.name());
    }

    /** Set: the slots (or {@link TouchedKeys#UNKNOWN_SLOT}) that have a {@link #touched} set. */
    public String touchedSlots() {
        return prefix + "cdc:touched";
    }

    /** Hash: slot -> WAL position of the last change the tail applied in it (ChangedSlots). */
    public String changedSlots() {
        return prefix + "cdc:changed";
    }

    /** Set: the partitions of a partitioned source table the tail has seen (PartitionWatch). */
    public String partitions() {
        return prefix + "cdc:partitions";
    }
}
