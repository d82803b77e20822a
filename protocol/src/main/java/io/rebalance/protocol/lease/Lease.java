package io.rebalance.protocol.lease;

/**
 * A lease its holder holds: the member the store keeps for it and its fencing token, which rises with every grant.
 * The single-holder lease ({@link OwnedLease}) and the readers-writers lock's leases ({@code lock/LockLease}) are
 * this one type: both are granted, renewed and refused in the one reply shape ({@link LeaseReply}), and both are lost
 * as one {@link LeaseLost}.
 */
public interface Lease {
    /** What the store holds for this lease: {@code owner#token}, or the owner of an exclusive lock lease. */
    String member();

    /** The fencing token: larger than every token granted before it for the same lease or scope. */
    long token();
}
