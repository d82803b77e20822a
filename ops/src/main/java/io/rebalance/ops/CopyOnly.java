package io.rebalance.ops;

/**
 * A run whose copy Postgres coordinates ({@code mover.coordinator: postgres}) has no tail, no cutover and no dashboard
 * history (their state lives in Redis alone): what the commands that would point at them say instead.
 */
public final class CopyOnly {
    /** The way on, as every command words it. */
    public static final String WAY_ON = "with mover.coordinator: postgres there is no tail and no cutover: a table"
            + " nothing writes to is copied with `rebalance copy --no-concurrent-writers`, then checked with"
            + " `rebalance verify --all`; to move a table that is still written, set mover.coordinator: redis"
            + " (docs/mover.md#choosing-a-coordinator)";

    private CopyOnly() {}
}
