package io.rebalance.protocol.lease;

import java.time.Duration;

/**
 * A lease as its holder sees it: the member it was granted and a local deadline, the time of the last successful
 * renewal's request plus four fifths of the TTL. Redis lets the lease lapse no earlier than a full TTL after that
 * request reached it, and nobody else can be granted it before, so while the local deadline is ahead, the lease is
 * this holder's; the fifth held back covers clock-rate differences between this process and Redis.
 *
 * <p>As a {@link WriteFence} it answers how long a write may take: the time to the local deadline, renewing first
 * once a third of the TTL has passed since the last renewal, and refusing once the lease is gone.
 */
public final class OwnedLease implements Lease, WriteFence {
    private final LeaseStore store;
    private final String key;
    private final String member;
    private final Duration ttl;
    private long validUntilNanos; // guarded by this: renewals may overlap, and a later reply must not undo a loss
    private boolean lost;

    private OwnedLease(LeaseStore store, String key, String member, Duration ttl, long requestedAtNanos) {
        this.store = store;
        this.key = key;
        this.member = member;
        this.ttl = ttl;
        this.validUntilNanos = requestedAtNanos + margin(ttl);
    }

    /**
     * @return the lease when granted to {@code owner} (or extended, when it held it already); empty with the reply
     *     when another holds it
     */
    public static Attempt acquire(LeaseStore store, String key, String owner, Duration ttl) {
        long at = System.nanoTime();
        LeaseReply r = store.acquire(key, owner, ttl);
        return new Attempt(r.granted() ? new OwnedLease(store, key, r.member(), ttl, at) : null, r);
    }

    /**
     * A lease granted by another statement than {@link LeaseStore#acquire} (a claim that picks the lease and takes it
     * at once), as held from {@code requestedAtNanos}, when that statement was sent.
     */
    public static OwnedLease granted(LeaseStore store, String key, String member, Duration ttl, long requestedAtNanos) {
        return new OwnedLease(store, key, member, ttl, requestedAtNanos);
    }

    /** The outcome of {@link #acquire}: {@code lease} is null when {@code reply} names another holder. */
    public record Attempt(OwnedLease lease, LeaseReply reply) {}

    /** Extends the lease. @throws LeaseLost naming the holder when this one no longer holds it */
    public void renew() {
        if (lost()) {
            throw new LeaseLost("", "lease " + key + " of " + member + " was lost earlier; it is never renewed again");
        }
        long at = System.nanoTime();
        LeaseReply r = store.renew(key, member, ttl);
        if (!r.granted()) {
            markLost(); // gone: every later check refuses without asking Redis
            throw new LeaseLost(
                    r.member(),
                    "lease " + key + " of " + member + " is "
                            + (r.member().isEmpty() ? "gone (it lapsed)" : "held by " + r.member()));
        }
        extendTo(at + margin(ttl));
    }

    private synchronized boolean lost() {
        return lost;
    }

    private synchronized void markLost() {
        lost = true;
    }

    /** Deadlines only move forward, and never again once the lease was found lost. */
    private synchronized void extendTo(long deadline) {
        if (!lost && deadline - validUntilNanos > 0) {
            validUntilNanos = deadline;
        }
    }

    /** @throws LeaseLost when the local deadline has passed without a renewal */
    public void check() {
        if (remainingNanos() <= 0) {
            throw new LeaseLost(
                    "",
                    "lease " + key + " of " + member + " was not renewed within " + ttl.toMillis()
                            + " ms; another holder may have it, so this one stops writing");
        }
    }

    /**
     * Renews once a third of the TTL has passed since the last renewal, so a write always has most of the lease
     * ahead of it. A renewal that succeeds past the local deadline is still sound: the member is this grant's, so
     * nobody held the lease in between.
     */
    @Override
    public Duration beforeWrite() {
        if (remainingNanos() < margin(ttl) - ttl.toNanos() / 3) {
            try {
                renew();
            } catch (LeaseLost e) {
                throw e;
            } catch (RuntimeException e) { // Redis away: the lease holds until its deadline, and not a moment longer
                if (remainingNanos() <= 0) {
                    throw new LeaseLost(
                            "",
                            "lease " + key + " of " + member + " could not be renewed (" + e + ") and its deadline"
                                    + " passed; nothing more is written under it");
                }
            }
        }
        return Duration.ofNanos(Math.max(0, remainingNanos()));
    }

    public void release() {
        store.release(key, member);
    }

    public String member() {
        return member;
    }

    /** The fencing token: grants of one lease get ever larger tokens. */
    public long token() {
        return new LeaseReply(1, member, 0, null).token();
    }

    public Duration ttl() {
        return ttl;
    }

    public synchronized long remainingNanos() {
        return lost ? -1 : validUntilNanos - System.nanoTime();
    }

    private static long margin(Duration ttl) {
        return ttl.toNanos() * 4 / 5;
    }
}
