package io.rebalance.verifier;

import io.rebalance.core.source.SourceSession;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;

/**
 * Before a suspect is read again from a hot standby: waits until the standby has replayed the primary's WAL position
 * as of now. Without it a row re-read there could be older than the item the tail already wrote from the primary,
 * and a change in flight would be reported as a difference. A session that is not in recovery (the source itself)
 * passes at once.
 */
final class StandbyCatchup {
    /** The wait for the primary's position, for a suspect read on the session given. */
    @FunctionalInterface
    interface Wait {
        void await(Connection reads) throws SQLException, InterruptedException;

        Wait NONE = reads -> {};
    }

    private static final long POLL_MS = 20;

    private final SourceSession primary;
    private final Duration bound;

    StandbyCatchup(SourceSession primary, Duration bound) {
        this.primary = primary;
        this.bound = bound;
    }

    /** @throws SQLException when the standby does not reach the position within the bound, naming both positions */
    void await(Connection standby) throws SQLException, InterruptedException {
        if (!inRecovery(standby)) return;
        String target;
        try (Connection p = primary.open()) {
            target = SourceFingerprints.walLsn(p);
        }
        long deadline = System.nanoTime() + bound.toNanos();
        try (PreparedStatement ps = standby.prepareStatement(
                "SELECT pg_last_wal_replay_lsn() >= CAST(? AS pg_lsn), pg_last_wal_replay_lsn()::text")) {
            ps.setString(1, target);
            while (true) {
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    if (rs.getBoolean(1)) return;
                    if (System.nanoTime() > deadline) {
                        throw new SQLException("the standby at verify.jdbcUrl replayed WAL to " + rs.getString(2)
                                + " and has not reached the primary's " + target + " within " + bound.toSeconds()
                                + " s; suspects cannot be re-checked against it: verify again once its replay lag"
                                + " is small, or leave verify.jdbcUrl empty to read the source");
                    }
                }
                // Postgres 15 offers no wait for a replay position (nor a notification of one): polled
                Thread.sleep(POLL_MS);
            }
        }
    }

    static boolean inRecovery(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_is_in_recovery()");
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getBoolean(1);
        }
    }
}
