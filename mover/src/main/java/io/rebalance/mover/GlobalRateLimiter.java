package io.rebalance.mover;

import io.rebalance.protocol.keyspace.RunKeys;
import java.util.concurrent.atomic.AtomicLong;
import redis.clients.jedis.UnifiedJedis;

/**
 * One rows-per-second limit shared by every process of a run: a counter per second in Redis
 * ({@code <prefix>rate:<epoch second>}), claimed with INCRBY before each batch. A batch that finds the second's
 * budget spent waits for the next second. Fixed windows allow a burst of up to two budgets across a window edge;
 * over seconds the rate holds, which is what protects a shared Postgres.
 *
 * <p>The limit itself is read from Redis by the process heartbeat ({@link #setLimit}), so `rebalance rate`
 * reaches every process within a heartbeat. A Redis failure here lets the batch through: a limiter must not stop
 * a migration that Redis will also stop anyway at its next progress save.
 */
public final class GlobalRateLimiter {
    private final UnifiedJedis redis;
    private final RunKeys keys;
    private final AtomicLong limit = new AtomicLong();

    public GlobalRateLimiter(UnifiedJedis redis, RunKeys keys, long initialLimit) {
        this.redis = redis;
        this.keys = keys;
        this.limit.set(initialLimit);
    }

    public void setLimit(long rowsPerSecond) {
        limit.set(rowsPerSecond);
    }

    public long limit() {
        return limit.get();
    }

    /** Blocks until {@code rows} more rows may be written. */
    public void acquire(int rows) throws InterruptedException {
        while (true) {
            long max = limit.get();
            if (max <= 0) return;
            long now = System.currentTimeMillis();
            long second = now / 1000;
            long used;
            try {
                String key = keys.rateWindow(second);
                used = redis.incrBy(key, rows);
                if (used == rows) redis.pexpire(key, 5_000);
            } catch (RuntimeException e) {
                return;
            }
            if (used - rows < max) return; // the window had room when this batch asked
            Thread.sleep(Math.max(1, (second + 1) * 1000 - now)); // this second's budget is spent: wait for the next
        }
    }
}
