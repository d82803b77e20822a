package io.rebalance.mover;

import io.rebalance.protocol.keyspace.RunKeys;
import java.util.concurrent.atomic.AtomicLong;
import redis.clients.jedis.UnifiedJedis;

/**
 * One rows-per-second limit shared by every process of a run: a count per second ({@link RateWindows}: in Redis, or
 * a Postgres table), claimed before each batch. A batch that finds the second's budget spent waits for the next
 * second. Fixed windows allow a burst of up to two budgets across a window edge; over seconds the rate holds, which
 * is what protects a shared Postgres.
 *
 * <p>The limit itself is read by the process heartbeat ({@link #setLimit}), so `rebalance rate` reaches every process
 * within a heartbeat. A failure to count lets the batch through: a limiter must not stop a migration that its
 * coordinator will also stop anyway at its next progress save.
 */
public final class GlobalRateLimiter {
    private final RateWindows windows;
    private final AtomicLong limit = new AtomicLong();

    public GlobalRateLimiter(UnifiedJedis redis, RunKeys keys, long initialLimit) {
        this(new RedisRateWindows(redis, keys), initialLimit);
    }

    public GlobalRateLimiter(RateWindows windows, long initialLimit) {
        this.windows = windows;
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
            RateWindows.Window w;
            try {
                w = windows.add(rows);
            } catch (RuntimeException e) {
                return;
            }
            if (w.used() - rows < max) return; // the window had room when this batch asked
            Thread.sleep(Math.max(1, w.msLeft())); // this second's budget is spent: wait for the next
        }
    }
}
