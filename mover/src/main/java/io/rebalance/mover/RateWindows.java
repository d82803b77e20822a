package io.rebalance.mover;

/**
 * The rows every process of a run takes, counted per one-second window of a clock they share: Redis's counters
 * ({@code RedisRateWindows}) or a Postgres table ({@code PostgresRateWindows}).
 */
public interface RateWindows {
    /** The current window after {@code rows} were added to it: its total, and the milliseconds left of it. */
    record Window(long used, long msLeft) {}

    /** Adds {@code rows} to the current window. */
    Window add(long rows);
}
