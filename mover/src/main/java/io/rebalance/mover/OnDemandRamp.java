package io.rebalance.mover;

/**
 * How fast writes may grow on an on-demand table: DynamoDB takes up to twice the previous peak at once, and may
 * throttle traffic that passes twice the peak within 30 minutes; a new table takes its warm throughput (4,000
 * writes/s unless raised). So the cap is the larger of the warm throughput and twice the peak consumed before the
 * current half hour; the peak counts from the next half hour on. Plain arithmetic on a clock the caller passes, so a
 * test runs hours of it in moments.
 */
public final class OnDemandRamp {
    /** A peak becomes the base the cap doubles after this long. */
    public static final long WINDOW_MS = 30 * 60 * 1000L;

    /**
     * @param warm what the table takes at once, units/s (0: not on-demand, no ramp)
     * @param peak the highest consumed rate seen, units/s
     * @param base the peak as of the current half hour's start
     * @param baseAtMs when the current half hour began
     */
    public record State(double warm, double peak, double base, long baseAtMs) {}

    private OnDemandRamp() {}

    /** The state after seeing {@code consumedPerSecond} at {@code nowMs}. */
    public static State next(State s, double consumedPerSecond, long nowMs) {
        double peak = Math.max(s.peak(), consumedPerSecond);
        if (nowMs - s.baseAtMs() >= WINDOW_MS) return new State(s.warm(), peak, peak, nowMs);
        return new State(s.warm(), peak, s.base(), s.baseAtMs());
    }

    /** The most the copy may ask for now, units/s. */
    public static double cap(State s) {
        return Math.max(s.warm(), 2 * s.base());
    }
}
