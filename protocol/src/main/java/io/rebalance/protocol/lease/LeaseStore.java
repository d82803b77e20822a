package io.rebalance.protocol.lease;

import java.time.Duration;

/**
 * The one single-holder lease, for every holder that is alone in its role: a slot's worker, the keeper, the tail
 * (the cutover's readers-writers lease is {@code protocol/lock}). Kept in Redis ({@link RedisLeaseStore}) or in a
 * Postgres table ({@link PostgresLeaseStore}), with the same answers. A lease is held as its member, {@code
 * <owner>#<token>}, for a TTL. Every grant gets a token larger than any grant of that lease before it, so every grant
 * has a member of its own; whatever a holder writes under its lease is checked against the whole member, so a holder
 * whose lease lapsed and was granted again, even to the same owner, is refused.
 */
public interface LeaseStore {
    /**
     * Takes the lease if free (a new token), or extends it if {@code owner} holds it already (the same member).
     *
     * @return granted with the caller's member and TTL, or refused naming the holder and how long it keeps it
     */
    LeaseReply acquire(String key, String owner, Duration ttl);

    /** Extends the lease {@code member} holds: refused (naming the holder, or {@code ""} if it lapsed) otherwise. */
    LeaseReply renew(String key, String member, Duration ttl);

    /** Gives the lease up, only if {@code member} holds it: a late release never frees another's lease. */
    LeaseReply release(String key, String member);

    /** The member holding {@code key}, or null. */
    String holder(String key);
}
