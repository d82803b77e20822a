package io.rebalance.protocol.handoff;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * The waiting side of both handshakes (hold, drain): the cutover asks, the tail answers in Redis within milliseconds,
 * and the cutover's blocked window is counted in those milliseconds, so it polls every 2 ms up to a bound.
 */
final class Answer {
    private static final long POLL_MS = 2;

    private Answer() {}

    /** @return true once {@code answered}; false when {@code timeout} passed first */
    static boolean await(BooleanSupplier answered, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!answered.getAsBoolean()) {
            if (System.nanoTime() > deadline) return false;
            Thread.sleep(POLL_MS); // polls an answer written by another process; no notification reaches us here
        }
        return true;
    }
}
