package io.rebalance.cdc;

import io.rebalance.core.codec.RowRefusedException;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.function.Function;

/**
 * The writes {@link ChangeApplier#send} started for one set of keys, which may still be landing: what the applier
 * checks a later send against (its keys, the key log generations they were logged under, one per scope) and what
 * {@link ChangeApplier#land} waits for.
 */
final class SentBatch {
    final List<String> keys;
    final Set<String> keySet;
    final List<Optional<String>> generations;
    final List<Future<List<RowRefusedException>>> writes;
    /** Keys whose rows were refused before any write (the codec's verdict). */
    final Set<String> refused;

    final Function<String, String> lsnOf;
    final int written;
    final long sentNanos;

    SentBatch(
            List<String> keys,
            List<Optional<String>> generations,
            List<Future<List<RowRefusedException>>> writes,
            Set<String> refused,
            Function<String, String> lsnOf,
            int written,
            long sentNanos) {
        this.keys = keys;
        this.keySet = new HashSet<>(keys);
        this.generations = generations;
        this.writes = writes;
        this.refused = refused;
        this.lsnOf = lsnOf;
        this.written = written;
        this.sentNanos = sentNanos;
    }

    /** Whether a write of any of {@code others} could race one of these. */
    boolean overlaps(List<String> others) {
        for (String k : others) if (keySet.contains(k)) return true;
        return false;
    }
}
