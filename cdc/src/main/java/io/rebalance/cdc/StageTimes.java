package io.rebalance.cdc;

import java.util.Arrays;
import java.util.EnumMap;
import java.util.Map;

/**
 * Where a batch's time goes, stage by stage, over the last {@value #KEPT} batches: the tail's latency broken down
 * (the bench prints it; a slow stage is the place to look). Recording is a clock read and an array store per stage.
 */
public final class StageTimes {
    /** The stages of applying one batch, in order. */
    public enum Stage {
        /** From the first change's commit to the batch reaching the tail: Debezium's share, its poll wait included. */
        DELIVERY,
        /** Reading the cutover's hold (Redis, then the Postgres fence). */
        HOLD,
        /** Recording the batch's keys in the applications' key log (Redis). */
        KEY_LOG,
        /** Recording the keys as touched, for reconciliation with the copy (Redis). */
        TOUCHED,
        /** Waiting until a snapshot sees the batch's transactions (Postgres). */
        VISIBILITY,
        /**
         * Reading the rows and writing the items until every write landed, then the refused list (Postgres, DynamoDB,
         * Redis); for a full batch landing with the next one (ADR 17), until that call landed it.
         */
        READ_AND_WRITE,
        /** After the writes: changed slots recorded, offsets marked, a hold acknowledged (Redis). */
        AFTER,
        /** The whole batch, from reaching the tail to its offsets marked. */
        BATCH
    }

    /** What one stage took, in microseconds. */
    public record Summary(int batches, long p50, long p99, long max) {}

    static final int KEPT = 8_192;

    private final long[][] micros = new long[Stage.values().length][KEPT];
    private final long[] recorded = new long[Stage.values().length];

    /** Records the stage as ending now, begun at {@code startNanos}. @return now, where the next stage begins */
    long since(Stage stage, long startNanos) {
        long now = System.nanoTime();
        record(stage, now - startNanos);
        return now;
    }

    synchronized void record(Stage stage, long nanos) {
        int s = stage.ordinal();
        micros[s][(int) (recorded[s]++ % KEPT)] = Math.max(0, nanos / 1_000);
    }

    /** Each stage over the batches kept. */
    public synchronized Map<Stage, Summary> summary() {
        Map<Stage, Summary> out = new EnumMap<>(Stage.class);
        for (Stage stage : Stage.values()) {
            int n = (int) Math.min(KEPT, recorded[stage.ordinal()]);
            long[] sorted = Arrays.copyOf(micros[stage.ordinal()], n);
            Arrays.sort(sorted);
            out.put(
                    stage,
                    n == 0
                            ? new Summary(0, 0, 0, 0)
                            : new Summary(
                                    n, sorted[(n - 1) / 2], sorted[(int) Math.ceil(0.99 * n) - 1], sorted[n - 1]));
        }
        return out;
    }

    /** Forgets what was recorded (a bench measures from here). */
    public synchronized void clear() {
        Arrays.fill(recorded, 0);
    }
}
