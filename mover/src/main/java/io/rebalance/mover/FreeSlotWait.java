package io.rebalance.mover;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The manager's wait after a walk found no slot: until the earliest lease the walk saw held elsewhere ends, at most
 * {@code mover.slotRetryDelay}, and no longer once a worker of this process gives a slot back or another process
 * says it gave one back (the run's newest event changed, looked at every {@link #ELSEWHERE_EVERY}: a process that
 * stops on SIGTERM writes one per slot). So no slot waits on a timer while a worker of the process is idle.
 */
final class FreeSlotWait {
    /** Past a lease's end as the walk saw it: the lease is gone from the store by then. */
    private static final Duration LEASE_END_MARGIN = Duration.ofMillis(20);
    /** How often a waiting manager asks whether another process gave a slot back: one read of the run's store. */
    static final Duration ELSEWHERE_EVERY = Duration.ofMillis(500);

    private final Duration cap;
    private final RunState run;
    private final Semaphore givenBack = new Semaphore(0);

    /**
     * @param cap the longest wait: {@code mover.slotRetryDelay}
     * @param run where processes say they gave a slot back
     */
    FreeSlotWait(Duration cap, RunState run) {
        this.cap = cap;
        this.run = run;
    }

    /** A worker's release failed: this process's waiting manager looks again at once (the lease may be gone). */
    void slotGivenBack() {
        givenBack.release();
    }

    /**
     * A worker gave {@code a}'s slot back unfinished: this process's waiting manager looks again at once, and the
     * run's event says so to the others (on SIGTERM that is the hand-over: another process takes the slot now, not
     * after the lease TTL).
     */
    void slotGivenBack(Picker.Assignment a) {
        givenBack.release();
        run.event("given-back slot=" + a.slot() + " by=" + a.owner());
    }

    /** Waits as {@link #await(Optional, BooleanSupplier, BooleanSupplier)}, woken by another process's give-back. */
    void await(Optional<Duration> leaseEnds, BooleanSupplier keepWaiting) throws InterruptedException {
        String seen = newestEvent();
        await(leaseEnds, keepWaiting, () -> {
            String now = newestEvent();
            return now != null && !now.equals(seen);
        });
    }

    /** The run's newest event line, or null when the store does not answer (the wait then goes on). */
    private String newestEvent() {
        try {
            List<String> newest = run.events(1);
            return newest.isEmpty() ? "" : newest.get(0);
        } catch (RuntimeException e) {
            return null;
        }
    }

    /**
     * @param leaseEnds how long until the earliest lease held elsewhere ends, empty when the walk saw none
     * @param keepWaiting checked every 200 ms: false ends the wait (the run stopped or finished, the process stops)
     * @param givenBackElsewhere checked every {@link #ELSEWHERE_EVERY}: true ends the wait (a slot may be free)
     */
    void await(Optional<Duration> leaseEnds, BooleanSupplier keepWaiting, BooleanSupplier givenBackElsewhere)
            throws InterruptedException {
        Duration d = cap;
        if (leaseEnds.isPresent() && leaseEnds.get().plus(LEASE_END_MARGIN).compareTo(d) < 0)
            d = leaseEnds.get().plus(LEASE_END_MARGIN);
        long until = System.nanoTime() + d.toNanos();
        long askAt = System.nanoTime() + ELSEWHERE_EVERY.toNanos();
        while (System.nanoTime() < until && keepWaiting.getAsBoolean()) {
            if (System.nanoTime() >= askAt) {
                if (givenBackElsewhere.getAsBoolean()) return;
                askAt = System.nanoTime() + ELSEWHERE_EVERY.toNanos();
            }
            long ms = Math.min(200, Math.max(1, (until - System.nanoTime()) / 1_000_000));
            if (givenBack.tryAcquire(ms, TimeUnit.MILLISECONDS)) {
                givenBack.drainPermits();
                return;
            }
        }
    }
}
