package io.rebalance.cdc;

import io.rebalance.protocol.keyspace.TailKeys;
import java.time.Duration;
import java.util.List;
import redis.clients.jedis.UnifiedJedis;

/**
 * Every tail process under the prefix, active or standing by, with when it was last seen ({@link TailKeys#members()}),
 * so {@code status} can say how many stand by to take over. Each tail marks itself every third of the lease TTL
 * while it stands by and every second while it streams, and leaves when it stops; one that died is no longer counted
 * once a TTL has passed.
 */
public final class TailMembers {
    private final UnifiedJedis redis;
    private final TailKeys keys;

    public TailMembers(UnifiedJedis redis, TailKeys keys) {
        this.redis = redis;
        this.keys = keys;
    }

    public void seen(String owner) {
        long now = System.currentTimeMillis();
        redis.zadd(keys.members(), now, owner);
        redis.zremrangeByScore(
                keys.members(),
                Double.NEGATIVE_INFINITY,
                now - Duration.ofHours(1).toMillis());
    }

    public void leave(String owner) {
        redis.zrem(keys.members(), owner);
    }

    /** The tails seen within {@code ttl}, but {@code holder}'s (the lease's member, {@code owner#token}). */
    public long standingBy(Duration ttl, String holder) {
        List<String> live = redis.zrangeByScore(
                keys.members(), System.currentTimeMillis() - ttl.toMillis(), Double.POSITIVE_INFINITY);
        String active = holder == null ? "" : holder.split("#", 2)[0];
        return live.stream().filter(m -> !m.equals(active)).count();
    }
}
