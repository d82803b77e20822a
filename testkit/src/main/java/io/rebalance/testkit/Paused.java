package io.rebalance.testkit;

import java.util.concurrent.CountDownLatch;

/** A thread held as a paused process holds it: it does not notice interrupts or timers until released. */
public final class Paused {
    private Paused() {}

    /** Waits for {@code release}, ignoring interrupts, and sets the interrupt flag again afterwards if one came. */
    public static void until(CountDownLatch release) {
        boolean interrupted = false;
        while (true) {
            try {
                release.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true; // a paused process does not notice timers: keep stalling
            }
        }
        if (interrupted) Thread.currentThread().interrupt();
    }
}
