package io.rebalance.core.retry;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Exponential backoff with full jitter: attempt n waits a random time in [0, min(max, base * 2^n)). Full jitter
 * spreads the retries of many workers that failed together (a Redis restart fails them all at once), so they do
 * not return in lockstep.
 *
 * @param attempts how many tries in all, at least 1
 * @param budget stop retrying once this much time has passed since the first try, whatever {@code attempts} says
 */
public record Backoff(Duration base, Duration max, int attempts, Duration budget) {
    /** Per call: about 15 s of retrying, enough to ride out a Redis or Postgres restart. */
    public static final Backoff DEFAULT =
            new Backoff(Duration.ofMillis(50), Duration.ofSeconds(2), 12, Duration.ofSeconds(15));

    public Backoff {
        if (attempts < 1) throw new IllegalArgumentException("attempts must be at least 1");
    }

    public Duration delay(int attempt) {
        long cap = Math.min(max.toMillis(), base.toMillis() << Math.min(attempt, 20));
        return Duration.ofMillis(ThreadLocalRandom.current().nextLong(Math.max(1, cap)));
    }
}
