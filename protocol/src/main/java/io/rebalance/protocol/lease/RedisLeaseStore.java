package io.rebalance.protocol.lease;

import io.rebalance.protocol.LuaScript;
import io.rebalance.protocol.keyspace.Keyspace;
import java.time.Duration;
import java.util.List;
import redis.clients.jedis.UnifiedJedis;

/**
 * The single-holder lease in Redis. A lease is the string {@code <owner>#<token>} (its member) with a TTL. Tokens come
 * from a counter beside the lease that only rises; scripts that guard a holder's Redis writes (progress, offsets)
 * compare the whole member. Three scripts answering in the one lease reply shape ({@link LeaseReply}).
 */
public final class RedisLeaseStore implements LeaseStore {
    private static final LuaScript ACQUIRE = LuaScript.load(RedisLeaseStore.class, "lease-acquire.lua");
    private static final LuaScript RENEW = LuaScript.load(RedisLeaseStore.class, "lease-renew.lua");
    private static final LuaScript RELEASE = LuaScript.load(RedisLeaseStore.class, "lease-release.lua");

    private final UnifiedJedis redis;

    public RedisLeaseStore(UnifiedJedis redis) {
        this.redis = redis;
    }

    @Override
    public LeaseReply acquire(String key, String owner, Duration ttl) {
        if (owner.contains("#")) throw new IllegalArgumentException("a lease owner has no '#': " + owner);
        return reply(ACQUIRE.eval(redis, List.of(key, Keyspace.leaseToken(key)), List.of(owner, ms(ttl))));
    }

    @Override
    public LeaseReply renew(String key, String member, Duration ttl) {
        return reply(RENEW.eval(redis, List.of(key), List.of(member, ms(ttl))));
    }

    @Override
    public LeaseReply release(String key, String member) {
        return reply(RELEASE.eval(redis, List.of(key), List.of(member)));
    }

    @Override
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
