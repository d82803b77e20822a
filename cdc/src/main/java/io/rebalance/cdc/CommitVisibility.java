package io.rebalance.cdc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;

/**
 * Waits until transactions the stream delivered are visible to a new snapshot, before the tail reads their rows.
 *
 * <p>Postgres writes and flushes a commit record before the committing backend leaves the proc array, and a
 * walsender may decode and send the commit in between. A snapshot taken then still counts the transaction as in
 * progress: the tail would miss an inserted row (and delete its item) or read an updated one as it was before, and
 * write that older state for good. Once a transaction is out of every new snapshot's in-progress set it stays out,
 * so checking one snapshot is enough for every read after it.
 *
 * <p>Transaction ids from the stream are 32 bits (pgoutput); snapshots hold 64-bit ones. They are compared as
 * Postgres compares xids, modulo 2^32, which holds for any transaction recent enough to be in a snapshot.
 */
final class CommitVisibility {
    private static final long LOW_32 = 0xFFFF_FFFFL;

    private CommitVisibility() {}

    /** One snapshot's view: xmax (the first xid it counts as not yet finished) and the xids in progress below it. */
    record Snapshot(long xmax, Set<Long> inProgress) {
        /** @param xid a transaction id as the stream gives it (its low 32 bits are used) */
        boolean sees(long xid) {
            long x = xid & LOW_32;
            if ((int) (x - (xmax & LOW_32)) >= 0) return false; // at or after xmax: not finished for this snapshot
            return !inProgress.contains(x);
        }
    }

    static Snapshot take(Connection c) throws SQLException {
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT pg_snapshot_xmax(s)::text, x::text"
                        + " FROM pg_current_snapshot() s LEFT JOIN LATERAL pg_snapshot_xip(s) x ON true")) {
            long xmax = 0;
            Set<Long> running = new HashSet<>();
            while (rs.next()) {
                xmax = Long.parseLong(rs.getString(1));
                String x = rs.getString(2);
                if (x != null) running.add(Long.parseLong(x) & LOW_32);
            }
            return new Snapshot(xmax, running);
        }
    }

    /**
     * Returns once a new snapshot sees every one of {@code xids}; calls {@code onWait} each time one does not yet.
     *
     * @throws SQLException when they are still not visible after {@code timeout} (the batch is then retried)
     */
    static void await(Connection c, Collection<Long> xids, Duration timeout, Runnable onWait)
            throws SQLException, InterruptedException {
        if (xids.isEmpty()) return;
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            Snapshot s = take(c);
            if (xids.stream().allMatch(s::sees)) return;
            onWait.run();
            if (System.nanoTime() > deadline) {
                throw new SQLException("transactions " + xids + " delivered by the stream are still not visible to"
                        + " a new snapshot after " + timeout.toSeconds() + " s");
            }
            Thread.sleep(1); // the committing backend is between its commit record and leaving the proc array
        }
    }
}
