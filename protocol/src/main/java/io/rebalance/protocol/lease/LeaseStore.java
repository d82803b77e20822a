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
 * same owner, is refused. Three scripts with one reply shape: {@code {granted 0|1, member, remaining ms}}, where the
 * member is the caller's when granted and the current holder's ({@code ""} for none) when not.
 */
public final class LeaseStore {
    private static final LuaScript ACQUIRE = LuaScript.load(LeaseStore.class, "lease-acquire.lua");
    private static final LuaScript RENEW = LuaScript.load(LeaseStore.class, "lease-renew.lua");
    private static final LuaScript RELEASE = LuaScript.load(LeaseStore.class, "lease-release.lua");

    private final UnifiedJedis redis;

    public LeaseStore(UnifiedJedis redis) {
        this.redis = redis;
    }

    /**
     * A script's answer.
     *
     * @param member the caller's member when {@code granted}, else the holder's, or "" when nobody holds it
     * @param remainingMs the lease's remaining TTL (negative when nobody holds it)
     */
    public record Reply(boolean granted, String member, long remainingMs) {
        /** The fencing token of {@link #member}, or 0 when it names nobody. */
        public long token() {
            int hash = member.lastIndexOf('#');
            return hash < 0 ? 0 : Long.parseLong(member.substring(hash + 1));
        }
    }

    /** Takes the lease if free, or extends it if {@code owner} holds it already. */
    public Reply acquire(String key, String owner, Duration ttl) {
        if (owner.contains("#")) throw new IllegalArgumentException("a lease owner has no '#': " + owner);
        return reply(ACQUIRE.eval(redis, List.of(key, Keyspace.leaseToken(key)), List.of(owner, ms(ttl))));
    }

    public Reply renew(String key, String member, Duration ttl) {
        return reply(RENEW.eval(redis, List.of(key), List.of(member, ms(ttl))));
    }

    public Reply release(String key, String member) {
        return reply(RELEASE.eval(redis, List.of(key), List.of(member)));
    }

    /** The member holding {@code key}, or null. */
    public String holder(String key) {
        return redis.get(key);
    }

    private static String ms(Duration d) {
        return Long.toString(d.toMillis());
    }

    private static Reply reply(Object result) {
        List<?> r = (List<?>) result;
        return new Reply((Long) r.get(0) == 1L, (String) r.get(1), (Long) r.get(2));
    }
}
