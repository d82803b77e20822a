package io.rebalance.ops.watch;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the figures read from Redis or Postgres current on one background thread, so that a scrape or a probe only
 * reads memory: a Prometheus scraping every few seconds never adds load to the services the migration uses, and a
 * service that hangs never hangs a probe.
 */
final class Refresher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Refresher.class);

    private final ScheduledExecutorService timer;
    private final Duration every;

    Refresher(Duration every) {
        this.every = every;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "rebalance-metrics-refresh");
            t.setDaemon(true);
            return t;
        });
    }

    /** Runs {@code task} now, on the caller's thread (so the first scrape has figures), then every period. */
    void every(String what, Runnable task) {
        Runnable safe = () -> {
            try {
                task.run();
            } catch (RuntimeException e) { // the figure stays as last read; the next round tries again
                log.debug("refreshing {} failed: {}", what, e.toString());
            }
        };
        safe.run();
        timer.scheduleWithFixedDelay(safe, every.toMillis(), every.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
