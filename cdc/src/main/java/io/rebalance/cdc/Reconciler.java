package io.rebalance.cdc;

import java.util.List;

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

    /** @return keys written again in this pass */
    int runOnce() throws Exception {
        int n = 0;
        if (applier.held()) return 0; // the keys stay recorded; they are written once the hold is lifted
        for (String bucket : touched.ready()) {
            for (List<String> keys = touched.peek(bucket, CHUNK); !keys.isEmpty(); keys = touched.peek(bucket, CHUNK)) {
                applier.apply(keys);
                touched.done(bucket, keys); // only after the write: a crash before this re-writes them next time
                n += keys.size();
                stats.reconciled.addAndGet(keys.size());
            }
            touched.forgetIfEmpty(bucket);
        }
        return n;
    }
}
