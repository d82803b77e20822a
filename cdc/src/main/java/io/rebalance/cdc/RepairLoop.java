package io.rebalance.cdc;

import io.rebalance.protocol.handoff.BypassedWrites;
import io.rebalance.protocol.lease.LeaseLost;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Carries out verify's repair requests, one at a time with the stream's batches, while this tail streams; and once a
 * cutover's hold is lifted (a rollback, an abort), writes the keys that bypassed the Postgres fence meanwhile as
 * Postgres holds them now: Postgres took those writes while the tail passed over them, so DynamoDB lacks them.
 */
final class RepairLoop {
    private static final Logger log = LoggerFactory.getLogger(RepairLoop.class);
    private static final int CHUNK = 500;

    private final RepairQueue repairs;
    /** Per scope: a held part's are written once its own hold is lifted. */
    private final List<BypassedWrites> bypassed;

    private final ChangeApplier applier;
    private final CountDownLatch stopped;

    RepairLoop(RepairQueue repairs, List<BypassedWrites> bypassed, ChangeApplier applier, CountDownLatch stopped) {
        this.repairs = repairs;
        this.bypassed = bypassed;
        this.applier = applier;
        this.stopped = stopped;
    }

    /** Serves requests while {@code going} holds, backing off a second after a failure. */
    void run(BooleanSupplier going) {
        while (going.getAsBoolean() && !Thread.currentThread().isInterrupted()) {
            try {
                applyBypassed();
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

    /** Writes the keys recorded as bypassing the fence in each scope no hold blocks rewrites of, then drops them. */
    private void applyBypassed() throws Exception {
        Holds now = null; // read once, and only when some scope has anything recorded
        for (int i = 0; i < bypassed.size(); i++) {
            if (!bypassed.get(i).any()) continue;
            if (now == null) now = applier.holds();
            if (!now.of(i).blocksRewrites()) applyBypassed(bypassed.get(i));
        }
    }

    private void applyBypassed(BypassedWrites bypassed) throws Exception {
        BypassedWrites.Summary found = bypassed.read();
        List<String> keys = new ArrayList<>(found.keys().keySet());
        for (int i = 0; i < keys.size(); i += CHUNK) applier.apply(keys.subList(i, Math.min(keys.size(), i + CHUNK)));
        bypassed.settle(found.keys());
        if (!keys.isEmpty()) {
            log.warn(
                    "wrote {} keys to DynamoDB that writes bypassing the Postgres fence changed while the tail was"
                            + " held (docs/cutover.md, \"Writes that bypass the fence\")",
                    keys.size());
        }
        if (found.overflow() > 0) {
            log.error(
                    "{} changes bypassed the Postgres fence while the tail was held whose keys were not kept (past the"
                            + " {} kept, or a TRUNCATE); their slots are marked changed: run `rebalance verify --all"
                            + " --repair` before the next cutover",
                    found.overflow(),
                    BypassedWrites.CAP);
            bypassed.forgetUnkept(found.overflow());
        }
    }
}
