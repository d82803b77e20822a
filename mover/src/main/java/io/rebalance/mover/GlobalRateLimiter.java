package io.rebalance.mover;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One rows-per-second limit shared by every process of a run: a count per second ({@link RateWindows}: in Redis, or
 * a Postgres table), claimed before each batch. A batch that finds the second's budget spent waits for the next
 * second. Fixed windows allow a burst of up to two budgets across a window edge; over seconds the rate holds, which
 * is what protects a shared Postgres.
 *
 * <p>The limit itself is read by the process heartbeat ({@link #setLimit}), so `rebalance rate` reaches every process
 * within a heartbeat. A failure to count lets the batch through: a limiter must not stop a migration that its
 * coordinator will also stop anyway at its next progress save.
 *
 * <p>A process asked to stop ({@link #stop}) ends every wait at once: a worker waiting for its turn holds a slot
 * lease that another process could be using (a low limit keeps most workers waiting most of the time).
 */
public final class GlobalRateLimiter {
    private final RateWindows windows;
    private final AtomicLong limit = new AtomicLong();
    private final CountDownLatch stopped = new CountDownLatch(1);

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

    /** Ends every wait, now and later, with an {@link InterruptedException}: the process stops. */
    public void stop() {
        stopped.countDown();
    }

    /**
     * Blocks until {@code rows} more rows may be written.
     *
     * @throws InterruptedException when the process stops ({@link #stop}) while the batch waits its turn
     */
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
            // this second's budget is spent: wait for the next, unless the process stops first
            if (stopped.await(Math.max(1, w.msLeft()), TimeUnit.MILLISECONDS))
                throw new InterruptedException("the process stops: the batch is not sent");
        }
    }
}
