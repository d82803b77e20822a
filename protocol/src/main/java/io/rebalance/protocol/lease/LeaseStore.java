package io.rebalance.protocol.lease;

import io.rebalance.protocol.LuaScript;
import io.rebalance.protocol.keyspace.Keyspace;
import java.time.Duration;
import java.util.List;
import redis.clients.jedis.UnifiedJedis;

/**
 * The one single-holder lease in Redis, for every holder that is alone in its role: a slot's worker, the keeper,
 * the tail (the cutover's readers-writers lease is {@code protocol/lock}). A lease is the string
 * {@code <owner>#<token>} (its member) with a TTL. Tokens come from a counter beside the lease that only rises, so
 * every grant has a member of its own and a later grant a larger token; scripts that guard a holder's Redis writes
 * (progress, offsets) compare the whole member, so a holder whose lease lapsed and was granted again, even to the
 * same owner, is refused. Three scripts answering in the one lease reply shape ({@link LeaseReply}).
 */
public final class LeaseStore {
    private static final LuaScript ACQUIRE = LuaScript.load(LeaseStore.class, "lease-acquire.lua");
    private static final LuaScript RENEW = LuaScript.load(LeaseStore.class, "lease-renew.lua");
    private static final LuaScript RELEASE = LuaScript.load(LeaseStore.class, "lease-release.lua");

    private final UnifiedJedis redis;

    public LeaseStore(UnifiedJedis redis) {
        this.redis = redis;
    }

    /** Takes the lease if free, or extends it if {@code owner} holds it already. */
    public LeaseReply acquire(String key, String owner, Duration ttl) {
        if (owner.contains("#")) throw new IllegalArgumentException("a lease owner has no '#': " + owner);
        return reply(ACQUIRE.eval(redis, List.of(key, Keyspace.leaseToken(key)), List.of(owner, ms(ttl))));
    }

    public LeaseReply renew(String key, String member, Duration ttl) {
        return reply(RENEW.eval(redis, List.of(key), List.of(member, ms(ttl))));
    }

    public LeaseReply release(String key, String member) {
        return reply(RELEASE.eval(redis, List.of(key), List.of(member)));
    }

    /** The member holding {@code key}, or null. */
    public String holder(String key) {
        return redis.get(key);
    }

    private static String ms(Duration d) {
        return Long.toString(d.toMillis());
    }

    private static LeaseReply reply(Object result) {
        return LeaseReply.of(result);
    }
}
