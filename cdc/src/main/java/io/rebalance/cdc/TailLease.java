package io.rebalance.cdc;

import io.rebalance.core.redis.LuaScript;
import java.time.Duration;
import java.util.List;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.params.SetParams;

/**
 * The one active tail: a Redis key with a TTL holding the owner id. The holder renews it every third of the TTL; a
 * standby retries acquiring it and so takes over within one TTL after the holder dies. The holder also keeps a
 * local deadline (last renewal + TTL, minus a margin) and stops writing when it passes without a renewal, so a
 * process cut off from Redis stops before a standby can start.
 */
public final class TailLease {
    private static final LuaScript RENEW = LuaScript.load(TailLease.class, "lease-renew.lua");
    private static final LuaScript RELEASE = LuaScript.load(TailLease.class, "lease-release.lua");

    private final UnifiedJedis redis;
    private final String key;
    private final String owner;
    private final Duration ttl;
    private volatile long validUntilNanos;

    public TailLease(UnifiedJedis redis, TailKeys keys, String owner, Duration ttl) {
        this.redis = redis;
        this.key = keys.lease();
        this.owner = owner;
        this.ttl = ttl;
    }

    /** @return true if this process now holds the lease */
    public boolean tryAcquire() {
        long start = System.nanoTime();
        boolean ok =
                "OK".equals(redis.set(key, owner, SetParams.setParams().nx().px(ttl.toMillis())));
        if (ok) validUntilNanos = start + margin();
        return ok;
    }

    /** @throws TailLeaseLostException naming the new holder when another process holds it */
    public void renew() {
        long start = System.nanoTime();
        Object r = RENEW.eval(redis, List.of(key), List.of(owner, String.valueOf(ttl.toMillis())));
        if (!"OK".equals(r)) {
            validUntilNanos = 0;
            throw new TailLeaseLostException("the tail lease is now held by '" + r + "'; this tail (" + owner
                    + ") stops so that only one applies changes");
        }
        validUntilNanos = start + margin();
    }

    /** @throws TailLeaseLostException when the lease may have expired (no renewal within the TTL minus a margin) */
    public void check() {
        if (System.nanoTime() - validUntilNanos > 0) {
            throw new TailLeaseLostException("the tail lease of " + owner + " was not renewed within " + ttl
                    + "; a standby may have taken over, so this tail stops writing");
        }
    }

    public void release() {
        RELEASE.eval(redis, List.of(key), List.of(owner));
    }

    public String holder() {
        return redis.get(key);
    }

    public String owner() {
        return owner;
    }

    public Duration ttl() {
        return ttl;
    }

    // a fifth of the TTL is kept back for clock-rate differences and the time a write is in flight
    private long margin() {
        return ttl.toNanos() * 4 / 5;
    }
}
