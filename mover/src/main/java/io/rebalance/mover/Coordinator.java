package io.rebalance.mover;

import io.rebalance.core.records.Records;
import io.rebalance.protocol.lease.LeaseStore;

/**
 * Where the processes of one copy meet ({@code mover.coordinator}): the run's state, its slots' leases and states, the
 * keeper's lease, the rows limit's windows, the write-unit budget and the progress history. {@code RedisCoordinator}
 * or {@code PostgresCoordinator}; the mover reads and writes the run only through these.
 */
public interface Coordinator extends AutoCloseable {
    /** {@code redis} or {@code postgres}, as {@code mover.coordinator} names it. */
    String kind();

    /** Where the run is kept, for messages: {@code Redis prefix 'mgre:'}, or the schema and its database. */
    String where();

    RunState run();

    SlotStore slots();

    /** The store of single-holder leases the keeper's is in. */
    LeaseStore leases();

    /** The keeper lease's name in {@link #leases()}. */
    String keeperLease();

    RateWindows rateWindows();

    WriteUnitBudget budget();

    /**
     * Appends the copy's rows and rows/s to the run's history (the dashboard's chart of the last hour), at most once
     * per period.
     */
    void sampleProgress(long nowMs, long rows, long rowsPerSecond);

    /** The rows DynamoDB could not hold, by id. */
    Records refused();

    /** The latest verification of each slot. */
    Records verified();

    /** Lets go of what the coordinator holds open (Postgres: its sessions); the run's state stays. */
    @Override
    default void close() {}
}
