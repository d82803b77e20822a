package io.rebalance.cdc;

import io.rebalance.protocol.lease.LeaseLost;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Carries out verify's repair requests, one at a time with the stream's batches, while this tail streams. */
final class RepairLoop {
    private static final Logger log = LoggerFactory.getLogger(RepairLoop.class);

    private final RepairQueue repairs;
    private final ChangeApplier applier;
    private final CountDownLatch stopped;

    RepairLoop(RepairQueue repairs, ChangeApplier applier, CountDownLatch stopped) {
        this.repairs = repairs;
        this.applier = applier;
        this.stopped = stopped;
    }

    /** Serves requests while {@code going} holds, backing off a second after a failure. */
    void run(BooleanSupplier going) {
        while (going.getAsBoolean() && !Thread.currentThread().isInterrupted()) {
            try {
                repairs.serveOne(applier, 1.0);
            } catch (LeaseLost e) {
                return;
            } catch (Exception e) {
                log.warn("a repair request failed, retrying in 1 s: {}", e.toString());
                try {
                    if (stopped.await(1, TimeUnit.SECONDS)) return; // backoff: the source or DynamoDB is away
                } catch (InterruptedException interrupted) {
                    return;
                }
            }
        }
    }
}
