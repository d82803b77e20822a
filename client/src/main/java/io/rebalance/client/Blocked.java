package io.rebalance.client;

import java.time.Duration;
import java.util.concurrent.atomic.LongAdder;

/**
 * Writes a guard held back while a cutover's exclusive lease blocked their scope: how many, and how long in all.
 * A write granted its lease at the first attempt is not counted.
 */
public record Blocked(long writes, long nanos) {
    public Duration time() {
        return Duration.ofNanos(nanos);
    }

    /** The running totals of one scope. */
    static final class Counter {
        private final LongAdder writes = new LongAdder();
        private final LongAdder nanos = new LongAdder();

        void add(long waited) {
            writes.increment();
            nanos.add(waited);
        }

        Blocked read() {
            return new Blocked(writes.sum(), nanos.sum());
        }
    }
}
