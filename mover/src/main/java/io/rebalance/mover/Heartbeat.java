package io.rebalance.mover;

import io.rebalance.core.copy.RunStatus;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * A copy process's heartbeat, once a second on a thread of its own: reads the run's status and rate limit, reports the write units consumed, and says
 * the process lives (with what it does) in the run's registry. Its own thread because a heartbeat that queued behind
 * the keeper's ticks read, to {@code status}, the cutover's checks and {@code reset}, as a process that died.
 */
final class Heartbeat implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Heartbeat.class);

    private final RunState run;
    private final String processId;
    private final CopyPacer pacer;
    private final MoverCounters counters;
    private final Callable<String> info;
    private final Consumer<RunStatus> status;
    private final FailureStreak failures = new FailureStreak(log, "heartbeat");
    private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "rebalance-heartbeat");
        t.setDaemon(true);
        return t;
    });

    /**
     * @param info this process's info JSON as of now ({@link ProcessInfo})
     * @param status told the run's status at every beat
     */
    Heartbeat(
            RunState run,
            String processId,
            CopyPacer pacer,
            MoverCounters counters,
            Callable<String> info,
            Consumer<RunStatus> status) {
        this.run = run;
        this.processId = processId;
        this.pacer = pacer;
        this.counters = counters;
        this.info = info;
        this.status = status;
    }

    /** Beats once now, on the caller's thread, then every second on its own. */
    void start() {
        beat();
        thread.scheduleWithFixedDelay(this::beat, 1, 1, TimeUnit.SECONDS);
    }

    /** One beat; a failure is counted and logged (as a streak), and the next beat tries again. */
    void beat() {
        counters.ticked(); // even while the coordinator is away: that is not being wedged
        MDC.put("phase", "heartbeat"); // removed after: start() runs it on the manager's thread too
        try {
            status.accept(run.status());
            run.heartbeat(processId, info.call()); // first: a budget that cannot be read must not hide the process
            pacer.heartbeat(run.rateLimit());
            failures.succeeded();
        } catch (Exception e) {
            failures.failed(e);
        } finally {
            MDC.remove("phase");
        }
    }

    @Override
    public void close() throws InterruptedException {
        thread.shutdownNow();
        thread.awaitTermination(5, TimeUnit.SECONDS);
    }
}
