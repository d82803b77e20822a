package io.rebalance.mover.postgres;

import io.rebalance.core.coordinator.CoordinatorSchema;
import io.rebalance.core.records.PostgresRecords;
import io.rebalance.core.records.Records;
import io.rebalance.core.retry.Retrier;
import io.rebalance.mover.Coordinator;
import io.rebalance.mover.RateWindows;
import io.rebalance.mover.RunState;
import io.rebalance.mover.WriteUnitBudget;
import io.rebalance.protocol.lease.LeaseStore;
import io.rebalance.protocol.lease.PostgresLeaseStore;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;

/**
 * The copy coordinated through tables of a Postgres schema ({@link Coordinator}, ADR 16): rows named for the run, in
 * the tables {@link CoordinatorSchema} makes. Every statement reads the database's clock, never a worker's.
 */
public final class PostgresCoordinator implements Coordinator {
    private final PostgresLeaseStore.Sessions sessions;
    private final CoordinatorSchema schema;
    private final String run;
    private final PostgresRunState state;
    private final PostgresSlotStore slots;
    private final String where;
    private final Runnable onClose;

    /** @param run names this run's rows apart from other runs' in the same schema (no {@code /}) */
    public PostgresCoordinator(
            PostgresLeaseStore.Sessions sessions,
            CoordinatorSchema schema,
            String run,
            Retrier retrier,
            Duration leaseTtl) {
        this(sessions, schema, run, retrier, leaseTtl, "schema " + schema.name(), () -> {});
    }

    /**
     * @param where the schema and its database, for messages
     * @param onClose what {@link #close} lets go of (the sessions' pool)
     */
    public PostgresCoordinator(
            PostgresLeaseStore.Sessions sessions,
            CoordinatorSchema schema,
            String run,
            Retrier retrier,
            Duration leaseTtl,
            String where,
            Runnable onClose) {
        this.where = where;
        this.onClose = onClose;
        this.sessions = sessions;
        this.schema = schema;
        this.run = run;
        this.state = new PostgresRunState(sessions, schema, run, retrier);
        this.slots = new PostgresSlotStore(sessions, schema, run, retrier, leaseTtl);
    }

    @Override
    public String kind() {
        return "postgres";
    }

    @Override
    public String where() {
        return where;
    }

    @Override
    public RunState run() {
        return state;
    }

    @Override
    public PostgresSlotStore slots() {
        return slots;
    }

    @Override
    public LeaseStore leases() {
        return new PostgresLeaseStore(sessions, schema.leases());
    }

    @Override
    public String keeperLease() {
        return run + "/keeper";
    }

    @Override
    public RateWindows rateWindows() {
        return new PostgresRateWindows(sessions, schema, run);
    }

    @Override
    public WriteUnitBudget budget() {
        return new PostgresWriteUnitBudget(sessions, schema, run);
    }

    /** Keeps no history: the dashboard's chart is drawn from Redis; {@code status} gives the rate. */
    @Override
    public void sampleProgress(long nowMs, long rows, long rowsPerSecond) {}

    @Override
    public Records refused() {
        return new PostgresRecords(sessions, schema, run, "refused");
    }

    @Override
    public Records verified() {
        return new PostgresRecords(sessions, schema, run, "verified");
    }

    /**
     * Deletes every row of the run from the coordinator's tables ({@code rebalance reset}); the tables stay.
     *
     * @param dryRun count the rows and delete nothing
     * @return the run's rows
     */
    public long forget(boolean dryRun) {
        try (Connection c = sessions.open()) {
            return schema.forget(c, run, dryRun);
        } catch (SQLException e) {
            throw new IllegalStateException("forgetting the run in " + where + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void close() {
        onClose.run();
    }
}
