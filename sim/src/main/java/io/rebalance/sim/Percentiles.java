package io.rebalance.sim;

import java.util.Arrays;

/** Nearest-rank percentiles of a sample. */
public final class Percentiles {
    private Percentiles() {}

    /** @param q in (0, 1]; @return the value at that rank, or 0 for an empty sample */
    public static long of(long[] sample, double q) {
        if (sample.length == 0) return 0;
        long[] sorted = sample.clone();
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }
}
