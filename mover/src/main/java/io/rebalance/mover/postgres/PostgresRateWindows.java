package io.rebalance.mover.postgres;

import io.rebalance.core.coordinator.CoordinatorSchema;
import io.rebalance.mover.RateWindows;
import io.rebalance.protocol.lease.PostgresLeaseStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * A row per run and second of the database's clock in the coordinator's {@code rate_windows} table, one upsert per
 * batch. The table is UNLOGGED: a count writes no WAL, and a crash loses at most the seconds being counted, which
 * only lets a batch through early (ADR 16). The first batch of a second deletes the run's windows older than 5 s.
 */
public final class PostgresRateWindows implements RateWindows {
    private final PostgresLeaseStore.Sessions sessions;
    private final String run;
    private final String add;
    private final String prune;

    public PostgresRateWindows(PostgresLeaseStore.Sessions sessions, CoordinatorSchema schema, String run) {
        this.sessions = sessions;
        this.run = run;
        String table = schema.rateWindows();
        this.add = "INSERT INTO " + table + " AS w (run, second, used) VALUES (?, floor(extract(epoch FROM"
                + " clock_timestamp()))::int8, ?) ON CONFLICT (run, second) DO UPDATE SET used = w.used + EXCLUDED.used"
                + " RETURNING used, second, ((second + 1) * 1000 - extract(epoch FROM clock_timestamp()) * 1000)::int8";
        this.prune = "DELETE FROM " + table + " WHERE run = ? AND second < ?";
    }

    @Override
    public Window add(long rows) {
        try (Connection c = sessions.open();
                PreparedStatement ps = c.prepareStatement(add)) {
            ps.setString(1, run);
            ps.setLong(2, rows);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long used = rs.getLong(1);
                if (used == rows) {
                    try (PreparedStatement p = c.prepareStatement(prune)) {
                        p.setString(1, run);
                        p.setLong(2, rs.getLong(2) - 5);
                        p.executeUpdate();
                    }
                }
                return new Window(used, Math.max(0, rs.getLong(3)));
            }
        } catch (SQLException e) {
            throw new IllegalStateException("rate window of run " + run + " in Postgres: " + e.getMessage(), e);
        }
    }
}
