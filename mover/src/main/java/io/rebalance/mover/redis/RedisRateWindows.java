package io.rebalance.mover.redis;

import io.rebalance.mover.RateWindows;
import io.rebalance.protocol.keyspace.RunKeys;
import redis.clients.jedis.UnifiedJedis;

/** A counter per second in Redis ({@code <prefix>rate:<epoch second>}), INCRBY per batch, gone after 5 s. */
public final class RedisRateWindows implements RateWindows {
    private final UnifiedJedis redis;
    private final RunKeys keys;

    public RedisRateWindows(UnifiedJedis redis, RunKeys keys) {
        this.redis = redis;
        this.keys = keys;
    }

    @Override
    public Window add(long rows) {
        long now = System.currentTimeMillis(); // the window is this process's second: hosts' clocks are kept close
        long second = now / 1000;
        String key = keys.rateWindow(second);
        long used = redis.incrBy(key, rows);
        if (used == rows) redis.pexpire(key, 5_000);
        return new Window(used, (second + 1) * 1000 - now);
    }
}
