package io.rebalance.mover;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The manager's wait after a walk found no slot: until the earliest lease the walk saw held elsewhere ends, at most
 * {@code mover.slotRetryDelay} (for slots given back by other processes, which nothing here sees), and no longer once
 * a worker of this process gives a slot back. So no slot waits on a timer while a worker of the process is idle.
 */
final class FreeSlotWait {
    /** Past a lease's end as the walk saw it: the lease is gone from the store by then. */
    private static final Duration LEASE_END_MARGIN = Duration.ofMillis(20);

    private final Duration cap;
    private final Semaphore givenBack = new Semaphore(0);

    /** @param cap the longest wait: {@code mover.slotRetryDelay} */
    FreeSlotWait(Duration cap) {
        this.cap = cap;
    }

    /** A worker gave a slot back unfinished: a waiting manager looks again at once. */
    void slotGivenBack() {
        givenBack.release();
    }

    /**
     * @param leaseEnds how long until the earliest lease held elsewhere ends, empty when the walk saw none
     * @param keepWaiting checked every 200 ms: false ends the wait (the run stopped or finished, the process stops)
     */
    void await(Optional<Duration> leaseEnds, BooleanSupplier keepWaiting) throws InterruptedException {
        Duration d = cap;
        if (leaseEnds.isPresent() && leaseEnds.get().plus(LEASE_END_MARGIN).compareTo(d) < 0)
            d = leaseEnds.get().plus(LEASE_END_MARGIN);
        long until = System.nanoTime() + d.toNanos();
        while (System.nanoTime() < until && keepWaiting.getAsBoolean()) {
            long ms = Math.min(200, Math.max(1, (until - System.nanoTime()) / 1_000_000));
            if (givenBack.tryAcquire(ms, TimeUnit.MILLISECONDS)) {
                givenBack.drainPermits();
                return;
            }
        }
    }
}
