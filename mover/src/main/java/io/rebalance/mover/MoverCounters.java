package io.rebalance.mover;

import java.util.concurrent.atomic.AtomicLong;

/** What this process has done, for its heartbeat, its log lines and the tests. Thread-safe. */
public final class MoverCounters {
    private final AtomicLong rowsWritten = new AtomicLong();
    private final AtomicLong slotsFinished = new AtomicLong();
    private final AtomicLong stepFailures = new AtomicLong();
    private final AtomicLong leasesLost = new AtomicLong();
    private final AtomicLong rowsRefused = new AtomicLong();
    private final AtomicLong lastTickMs = new AtomicLong(System.currentTimeMillis());

    void rowsWritten(long n) {
        rowsWritten.addAndGet(n);
    }

    void rowsRefused(long n) {
        rowsRefused.addAndGet(n);
    }

    void ticked() {
        lastTickMs.set(System.currentTimeMillis());
    }

    void slotFinished() {
        slotsFinished.incrementAndGet();
    }

    void stepFailed() {
        stepFailures.incrementAndGet();
    }

    void leaseLost() {
        leasesLost.incrementAndGet();
    }

    public long rowsWritten() {
        return rowsWritten.get();
    }

    /** Rows DynamoDB cannot hold as mapped, listed as refused instead of written. */
    public long rowsRefused() {
        return rowsRefused.get();
    }

    /** When the process's heartbeat loop last ran, epoch ms: a loop that stops ticking is a wedged process. */
    public long lastTickMs() {
        return lastTickMs.get();
    }

    public long slotsFinished() {
        return slotsFinished.get();
    }

    public long stepFailures() {
        return stepFailures.get();
    }

    public long leasesLost() {
        return leasesLost.get();
    }
}
