package io.rebalance.core.retry;

import java.time.Duration;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The innermost of the three recovery layers: one call to Postgres, DynamoDB or Redis, retried with
 * {@link Backoff} while the failure is {@link Transience#isRetriable retriable}. When the retries are spent the last
 * failure propagates and the next layer (the slot step, restarted from saved progress) takes over.
 */
public final class Retrier {
    private static final Logger log = LoggerFactory.getLogger(Retrier.class);

    private final Backoff backoff;
    private final Sleeper sleeper;

    /** Waits between attempts; tests pass one that records instead of sleeping. */
    @FunctionalInterface
    public interface Sleeper {
        void sleep(Duration d) throws InterruptedException;
    }

    public Retrier(Backoff backoff) {
        this(backoff, d -> Thread.sleep(d.toMillis()));
    }

    public Retrier(Backoff backoff, Sleeper sleeper) {
        this.backoff = backoff;
        this.sleeper = sleeper;
    }

    public static Retrier standard() {
        return new Retrier(Backoff.DEFAULT);
    }

    /** One try, no retry: for a caller that retries the whole step itself (the tail re-reads a failed batch's rows). */
    public static Retrier once() {
        return new Retrier(new Backoff(Duration.ZERO, Duration.ZERO, 1, Duration.ZERO));
    }

    /**
     * @param what what the call does, for the log ("read page of slot 20241020.02")
     * @throws RuntimeException the last failure, unchanged if unchecked, wrapped in {@link RetriesExhausted} if checked
     */
    public <T> T call(String what, Callable<T> call) {
        long started = System.nanoTime();
        for (int attempt = 0; ; attempt++) {
            try {
                return call.call();
            } catch (Exception e) {
                boolean timeLeft =
                        System.nanoTime() - started < backoff.budget().toNanos();
                if (!Transience.isRetriable(e) || attempt + 1 >= backoff.attempts() || !timeLeft) {
                    if (attempt > 0) log.warn("{}: giving up after {} attempts: {}", what, attempt + 1, e.toString());
                    throw e instanceof RuntimeException re ? re : new RetriesExhausted(what, e);
                }
                Duration wait = backoff.delay(attempt);
                log.debug("{}: attempt {} failed ({}); retrying in {} ms", what, attempt + 1, e, wait.toMillis());
                try {
                    sleeper.sleep(wait);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new RetriesExhausted(what + " (interrupted)", e);
                }
            }
        }
    }

    public void run(String what, ThrowingRunnable r) {
        call(what, () -> {
            r.run();
            return null;
        });
    }

    @FunctionalInterface
    public interface ThrowingRunnable {
        void run() throws Exception;
    }

    /** A checked failure that outlived its retries. */
    public static final class RetriesExhausted extends RuntimeException {
        RetriesExhausted(String what, Throwable cause) {
            super(what + " failed: " + cause, cause);
        }
    }
}
