package io.rebalance.cutover;

import io.rebalance.protocol.lease.LeaseLost;
import io.rebalance.protocol.lock.LockLease;
import io.rebalance.protocol.lock.SharedExclusiveLock;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The exclusive lease while a cutover command runs: taken by repeating the request until every shared holder has
 * gone (the request itself makes new writers wait), then renewed every third of its TTL. If a renewal finds the lease
 * gone, {@link #lease()} throws from then on, and the route script refuses the lease anyway. Closing stops the
 * renewal without releasing: the lease then lapses on its own, exactly as when the process dies.
 */
final class HeldLease implements AutoCloseable {
    private final SharedExclusiveLock lock;
    private final Duration ttl;
    private final ScheduledExecutorService renewer;
    private volatile LockLease lease;
    private volatile RuntimeException lost;

    private HeldLease(SharedExclusiveLock lock, Duration ttl, LockLease lease) {
        this.lock = lock;
        this.ttl = ttl;
        this.lease = lease;
        this.renewer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "cutover-lease");
            t.setDaemon(true);
            return t;
        });
        long third = Math.max(1, ttl.toMillis() / 3);
        renewer.scheduleWithFixedDelay(this::renew, third, third, TimeUnit.MILLISECONDS);
    }

    /**
     * @param deadlineNanos {@link System#nanoTime()} by which the lease must be held
     * @param waitForOthers whether another owner's lease or request is waited out (recovery waits for a dead
     *     cutover's lease to lapse) or refuses at once
     */
    static HeldLease acquire(
            SharedExclusiveLock lock, String owner, Duration ttl, long deadlineNanos, boolean waitForOthers)
            throws StepFailed, InterruptedException {
        long pause = 1;
        while (true) {
            SharedExclusiveLock.Attempt a = lock.tryExclusive(owner, ttl);
            if (a instanceof SharedExclusiveLock.Granted g) return new HeldLease(lock, ttl, g.lease());
            if (a instanceof SharedExclusiveLock.Refused r && !waitForOthers) {
                throw new StepFailed("the lock is " + (r.by().equals("exclusive") ? "held" : "requested") + " by "
                        + r.owner() + " for another " + r.remainingMs() + " ms; see `rebalance status`");
            }
            if (System.nanoTime() > deadlineNanos) {
                lock.withdraw(owner);
                String why = a instanceof SharedExclusiveLock.Pending p
                        ? p.sharedHolders() + " writer(s) still held shared leases, the last for another "
                                + p.longestRemainingMs() + " ms"
                        : "the lock stayed held by " + ((SharedExclusiveLock.Refused) a).owner();
                throw new StepFailed("the exclusive lease was not granted within the write-block budget: " + why);
            }
            Thread.sleep(pause); // polls the drain of running writes; each call also keeps the request alive
            pause = Math.min(5, pause + 1);
        }
    }

    private void renew() {
        try {
            lease = lock.renew(lease, ttl);
        } catch (LeaseLost e) {
            lost = e;
            renewer.shutdown();
        } catch (RuntimeException e) {
            // Redis unreachable for a moment: the next renewal tries again, well within the TTL
        }
    }

    /** @throws LeaseLost once a renewal found the lease gone */
    LockLease lease() {
        if (lost != null) throw lost;
        return lease;
    }

    long token() {
        return lease.token();
    }

    void release() {
        renewer.shutdownNow();
        lock.release(lease);
    }

    @Override
    public void close() {
        renewer.shutdownNow();
    }
}
