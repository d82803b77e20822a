package io.rebalance.cdc;

import java.util.List;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

/**
 * Writes again, from Postgres as it is now, every key the tail wrote while the backfill of its slot could still
 * overwrite it, once that backfill is over (ADR 6). Runs through the same {@link ChangeApplier} as the stream, so
 * it is never concurrent with a stream write of the same key.
 */
final class Reconciler {
    private static final int CHUNK = 500;

    private final TouchedKeys touched;
    private final ChangeApplier applier;
    private final TailStats stats;

    Reconciler(TouchedKeys touched, ChangeApplier applier, TailStats stats) {
        this.touched = touched;
        this.applier = applier;
        this.stats = stats;
    }

    /**
     * Keys of a held scope (a part in its cutover, or moved) stay recorded, and are written once its hold is lifted.
     *
     * @return keys written again in this pass
     */
    int runOnce() throws Exception {
        int n = 0;
        Holds now = applier.holds(); // once a pass, as a whole table's was; apply checks again under its lock
        if (now.allBlockRewrites()) return 0;
        for (String bucket : touched.ready()) {
            String cursor = ScanParams.SCAN_POINTER_START;
            do {
                ScanResult<String> page = touched.scan(bucket, cursor, CHUNK);
                cursor = page.getCursor();
                List<String> keys = now.rewritable(page.getResult());
                if (keys.isEmpty()) continue;
                applier.apply(keys);
                touched.done(bucket, keys); // only after the write: a crash before this re-writes them next time
                n += keys.size();
                stats.reconciled.addAndGet(keys.size());
            } while (!cursor.equals(ScanParams.SCAN_POINTER_START));
            touched.forgetIfEmpty(bucket);
        }
        return n;
    }
}
