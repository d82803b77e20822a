package io.rebalance.demo;

import java.time.Duration;

/**
 * The demo's one way to wait for another process (Debezium, the tail, Postgres, a cutover command's effects): nothing
 * notifies this one, so it asks again at a fixed interval, up to a bound.
 */
final class Poll {
    /** A condition read from another process; it may fail, and its failure ends the wait. */
    @FunctionalInterface
    interface Condition {
        boolean holds() throws Exception;
    }

    private Poll() {}

    /** @return true once {@code condition} holds; false when {@code bound} passed first */
    static boolean until(Condition condition, Duration every, Duration bound) throws Exception {
        long deadline = System.nanoTime() + bound.toNanos();
        while (!condition.holds()) {
            if (System.nanoTime() > deadline) return false;
            Thread.sleep(every.toMillis()); // the one scheduled wait: each caller's interval says what it waits on
        }
        return true;
    }
}
