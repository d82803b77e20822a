package io.rebalance.protocol.keyspace;

/** The parts {@code rebalance reset --forget} deletes one at a time; every key of a run belongs to one. */
public enum ResetGroup {
    /** The copy's plan, progress, slot leases, keeper, rate limit, verifications and refused rows. */
    COPY,
    /** The change stream's offsets, lease, repair queue, key logs and hand-off state. */
    TAIL,
    /** The routing entries, their locks, the cutover's journal and the target-write log. */
    ROUTE
}
