package io.rebalance.client;

import java.time.Duration;

/**
 * How {@link ShadowReads} runs the reads it compares, off the application's request path.
 *
 * @param threads the threads comparing, each waiting on one shadow read at a time
 * @param queue the sampled reads waiting for a thread; one more is skipped (counted as such), never waited for
 * @param timeout how long one shadow read may take before it counts as an error; a read that ignores the interrupt
 *     keeps its thread until it returns, so a store that hangs makes later shadow reads errors too (never the
 *     application's)
 */
public record ShadowSettings(int threads, int queue, Duration timeout) {
    public ShadowSettings {
        if (threads < 1) throw new IllegalArgumentException("threads " + threads + " is below 1");
        if (queue < 1) throw new IllegalArgumentException("queue " + queue + " is below 1");
        if (timeout.toMillis() < 1) throw new IllegalArgumentException("timeout " + timeout + " is below 1 ms");
    }

    /** Two threads, a thousand reads waiting at most, a second per shadow read. */
    public static ShadowSettings defaults() {
        return new ShadowSettings(2, 1_000, Duration.ofSeconds(1));
    }
}
