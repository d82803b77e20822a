package io.rebalance.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Future;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * The tail's safety rails. A tail whose table is idle while the rest of the database is busy still lets Postgres
 * drop WAL: its heartbeat writes a logical message the slot decodes, so the confirmed position follows the server's,
 * not the table's last change (without it, pgoutput sends nothing for other tables and the slot pins WAL forever).
 * A TRUNCATE of the source is reported in the log and in status, and not applied.
 */
class SafetyRailsIT {
    @Test
    void anIdleTableDoesNotPinWalWhileOtherTablesAreWritten() throws Exception {
        try (TailFixture f = new TailFixture()) {
            f.set("tail.heartbeat", "500ms");
            List<Future<?>> outcomes = new ArrayList<>();
            f.startTail("tail-idle", outcomes);
            f.awaitStreaming();
            f.insert(ChangeKindsIT.id(1), "message", null, 1);
            f.awaitItem(ChangeKindsIT.id(1), true);

            String other = f.table + "_other"; // not in the tail's publication
            f.sql(
                    "CREATE TABLE " + other + " (n int, pad text)",
                    "INSERT INTO " + other + " SELECT g, repeat('x', 200) FROM generate_series(1, 20000) g");
            String written = one(f, "SELECT pg_current_wal_lsn()::text");
            try {
                Awaitility.await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(one(
                                f,
                                "SELECT confirmed_flush_lsn >= '" + written + "'::pg_lsn FROM"
                                        + " pg_replication_slots WHERE slot_name = '" + f.slotName + "'"))
                        .as("the slot confirmed the WAL written to another table")
                        .isEqualTo("t"));
            } finally {
                f.sql("DROP TABLE " + other);
            }
            assertThat(outcomes).noneMatch(Future::isDone);
        }
    }

    @Test
    void aTruncateIsReportedAndNotApplied() throws Exception {
        try (TailFixture f = new TailFixture()) {
            List<Future<?>> outcomes = new ArrayList<>();
            Tail tail = f.startTail("tail-truncate", outcomes);
            f.awaitStreaming();
            f.insert(ChangeKindsIT.id(1), "message", null, 1);
            f.insert(ChangeKindsIT.id(2), "message", null, 2);
            f.awaitItem(ChangeKindsIT.id(2), true);

            f.sql("TRUNCATE " + f.table);
            f.insert(ChangeKindsIT.id(3), "marker", null, 3);
            f.awaitItem(ChangeKindsIT.id(3), true); // the stream went on past the TRUNCATE
            assertThat(f.item(ChangeKindsIT.id(1)))
                    .as("items are not deleted by a TRUNCATE")
                    .isNotEmpty();
            Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(
                            f.redis.hget(tail.keys().status(), "truncated_lsn"))
                    .matches("[0-9A-F]+/[0-9A-F]+"));
            assertThat(outcomes).noneMatch(Future::isDone);
        }
    }

    private static String one(TailFixture f, String sql) throws Exception {
        try (Connection c = f.services.postgres();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }
}
