package io.rebalance.mover;

import io.rebalance.core.copy.RunStatus;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * When a process's keeper candidate ticks: on a schedule, and nudged after a slot finishes (it may be the last one,
 * and compacting at once ends the run without waiting for the schedule). However many slots finish meanwhile, at most
 * one nudged tick waits: a tick per finished slot once queued hundreds deep on a range of empty slots.
 */
final class KeeperTicks {
    private static final Logger log = LoggerFactory.getLogger(KeeperTicks.class);

    private final Keeper keeper;
    private final ScheduledExecutorService threads;
    private final Consumer<RunStatus> status;
    private final FailureStreak failures = new FailureStreak(log, "keeper tick");
    private final AtomicBoolean nudged = new AtomicBoolean();

    /** @param status told the run's status after each tick of the active keeper */
    KeeperTicks(Keeper keeper, ScheduledExecutorService threads, Consumer<RunStatus> status) {
        this.keeper = keeper;
        this.threads = threads;
        this.status = status;
    }

    void start(long intervalMs) {
        threads.scheduleWithFixedDelay(this::tick, 0, intervalMs, TimeUnit.MILLISECONDS);
    }

    /** A slot finished: tick soon, if this process's keeper is the active one. */
    void nudge() {
        if (keeper.active() && nudged.compareAndSet(false, true))
            threads.execute(() -> {
                nudged.set(false);
                tick();
            });
    }

    /** Synchronized: the schedule and a nudge must not run two ticks at once. */
    synchronized void tick() {
        MDC.put("phase", "keeper");
        try {
            RunStatus s = keeper.tick();
            if (s != null) status.accept(s); // the active keeper's own process learns a change at once
            failures.succeeded();
        } catch (Exception e) {
            failures.failed(e);
        } finally {
            MDC.remove("phase");
        }
    }
}
