package io.rebalance.mover;

import java.util.concurrent.atomic.AtomicLong;

/** What this process has done, for its heartbeat, its log lines and the tests. Thread-safe. */
public final class MoverCounters {
    private final AtomicLong rowsWritten = new AtomicLong();
    private final AtomicLong slotsFinished = new AtomicLong();
    private final AtomicLong stepFailures = new AtomicLong();
    private final AtomicLong leasesLost = new AtomicLong();

    void rowsWritten(long n) {
        rowsWritten.addAndGet(n);
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
