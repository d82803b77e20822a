package io.rebalance.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The tail reads a delivered change only once a snapshot sees its transaction. Postgres can hand a commit to the
 * stream while new snapshots still count the transaction as in progress; a transaction held open is the same
 * state for a snapshot, and one a test can hold for as long as it likes.
 */
class CommitVisibilityIT {
    private final SharedServices services = SharedServices.get();

    @Test
    void aSnapshotSeesATransactionOnlyOnceItHasCommitted() throws Exception {
        String table = SharedServices.unique("visibility");
        try (Connection writer = services.postgres();
                Connection reader = services.postgres();
                Statement w = writer.createStatement()) {
            long xid = insertWithoutCommit(w, table);

            assertThat(CommitVisibility.take(reader).sees(xid)).isFalse();
            assertThat(rows(reader, table)).isZero(); // what the tail would have read: the row is not there

            writer.commit();
            assertThat(CommitVisibility.take(reader).sees(xid)).isTrue();
            assertThat(rows(reader, table)).isOne();
            w.execute("DROP TABLE " + table);
            writer.commit();
        }
    }

    @Test
    void awaitReturnsOnlyAfterTheCommitAndTheReadThenSeesTheRow() throws Exception {
        String table = SharedServices.unique("visibility");
        try (Connection writer = services.postgres();
                Connection reader = services.postgres();
                Statement w = writer.createStatement()) {
            long xid = insertWithoutCommit(w, table);
            long unrelatedCommitted;
            try (Connection other = services.postgres();
                    Statement o = other.createStatement()) {
                unrelatedCommitted = xid(o); // autocommit: assigned and committed at once
            }

            CountDownLatch sawItRunning = new CountDownLatch(1);
            AtomicReference<Object> outcome = new AtomicReference<>();
            Thread tail = new Thread(() -> {
                try {
                    CommitVisibility.await(
                            reader, List.of(unrelatedCommitted, xid), Duration.ofMinutes(1), sawItRunning::countDown);
                    outcome.set(rows(reader, table));
                } catch (Exception e) {
                    outcome.set(e);
                }
            });
            tail.start();
            sawItRunning.await(); // it has found the transaction in progress and is waiting, not reading
            assertThat(outcome.get()).isNull();

            writer.commit();
            tail.join();
            assertThat(outcome.get()).isEqualTo(1L);
            w.execute("DROP TABLE " + table);
            writer.commit();
        }
    }

    @Test
    void xidsCompareModulo2To32AsPostgresDoes() {
        long epoch = 3L << 32;
        var s = new CommitVisibility.Snapshot(epoch + 1_000, Set.of(990L));
        assertThat(s.sees(999)).isTrue();
        assertThat(s.sees(990)).isFalse(); // in progress
        assertThat(s.sees(1_000)).isFalse(); // at xmax
        assertThat(s.sees(1_001)).isFalse(); // after xmax
        // xmax just past a wrap of the low 32 bits: an xid from just before the wrap is older, so seen
        var wrapped = new CommitVisibility.Snapshot((4L << 32) + 5, Set.of());
        assertThat(wrapped.sees(0xFFFF_FFF0L)).isTrue();
        assertThat(wrapped.sees(7)).isFalse();
    }

    /** Creates {@code table} and inserts one row in a transaction left open. @return that transaction's xid */
    private static long insertWithoutCommit(Statement w, String table) throws Exception {
        w.execute("CREATE TABLE " + table + " (id text PRIMARY KEY)");
        w.getConnection().setAutoCommit(false);
        w.execute("INSERT INTO " + table + " VALUES ('a')");
        return xid(w);
    }

    private static long xid(Statement st) throws Exception {
        try (ResultSet rs = st.executeQuery("SELECT pg_current_xact_id()::text")) {
            rs.next();
            return Long.parseLong(rs.getString(1)) & 0xFFFF_FFFFL; // as pgoutput gives it: 32 bits
        }
    }

    private static long rows(Connection c, String table) throws Exception {
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT count(*) FROM " + table)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
