package io.rebalance.cdc;

import io.rebalance.protocol.keyspace.TailKeys;
import io.rebalance.protocol.lease.LeaseLost;
import io.rebalance.protocol.lease.LeaseStore;
import io.rebalance.protocol.lease.OwnedLease;
import io.rebalance.protocol.lease.RedisLeaseStore;
import io.rebalance.protocol.lease.WriteFence;
import java.time.Duration;
import redis.clients.jedis.UnifiedJedis;

/**
 * The one active tail: the project's one lease ({@code protocol/lease}) on {@code <prefix>{cdc}:lease}. The holder renews
 * it every third of the TTL; a standby retries acquiring it every 0.25 s and so takes over at once when the holder
 * gives it up (SIGTERM), within one TTL after the holder dies.
 * The holder keeps a local deadline (last renewal + four fifths of the TTL) and writes nothing past it: every
 * DynamoDB write is bound to the lease as a {@link WriteFence} (each attempt checked just before it is sent, ADR 6),
 * and every Redis write of the offsets compares the lease's member, so a tail paused past its lease writes nothing
 * over its successor.
 */
public final class TailLease implements WriteFence {
    private final LeaseStore store;
    private final String key;
    private final String owner;
    private final Duration ttl;
    private volatile OwnedLease held;

    public TailLease(UnifiedJedis redis, TailKeys keys, String owner, Duration ttl) {
        this.store = new RedisLeaseStore(redis);
        this.key = keys.lease();
        this.owner = owner;
        this.ttl = ttl;
    }

    /** @return true if this process now holds the lease */
    public boolean tryAcquire() {
        OwnedLease.Attempt a = OwnedLease.acquire(store, key, owner, ttl);
        held = a.lease();
        return held != null;
    }

    /** @throws LeaseLost naming the new holder when another process holds it */
    public void renew() {
        try {
            current().renew();
        } catch (LeaseLost e) {
            throw lost(e);
        }
    }

    /** @throws LeaseLost when the lease may have expired (no renewal within the TTL minus a margin) */
    public void check() {
        try {
            current().check();
        } catch (LeaseLost e) {
            throw lost(e);
        }
    }

    @Override
    public Duration beforeWrite() {
        try {
            return current().beforeWrite();
        } catch (LeaseLost e) {
            throw lost(e);
        }
    }

    public void release() {
        OwnedLease h = held;
        if (h != null) h.release();
    }

    public String holder() {
        return store.holder(key);
    }

    public String owner() {
        return owner;
    }

    /** The member of the lease this tail holds ({@code owner#token}), or the owner while it holds none. */
    public String member() {
        OwnedLease h = held;
        return h == null ? owner : h.member();
    }

    public Duration ttl() {
        return ttl;
    }

    private OwnedLease current() {
        OwnedLease h = held;
        if (h == null) throw new LeaseLost("", "this tail (" + owner + ") holds no lease");
        return h;
    }

    private LeaseLost lost(LeaseLost e) {
        return new LeaseLost(
                e.holder(), e.getMessage() + "; this tail (" + owner + ") stops so that only one applies changes");
    }
}
