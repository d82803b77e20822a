package io.rebalance.sim;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

/** The simulators' writer threads at the end: no new write starts, and those running are waited for. */
final class WriterThreads {
    private WriterThreads() {}

    /** Stops {@code threads} (null for none started) and waits up to 30 s for their writes to end. */
    static void stop(ExecutorService threads) {
        if (threads == null) return;
        threads.shutdown();
        try {
            threads.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
