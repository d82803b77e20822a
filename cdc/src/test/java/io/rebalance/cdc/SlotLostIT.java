package io.rebalance.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.testkit.PrivatePostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * A replication slot that lost changes stops the tail once, with its exit code and the way forward, instead of a
 * restart every 2 s forever (or a new slot that silently starts after the gap): a slot dropped under the running
 * tail, and a slot Postgres invalidated because it fell more than {@code max_slot_wal_keep_size} behind (on a cluster
 * this test makes for itself, so no other test's slot is at risk).
 */
class SlotLostIT {
    @Test
    void aSlotDroppedUnderTheRunningTailStopsIt() throws Exception {
        try (TailFixture f = new TailFixture()) {
            List<Future<?>> outcomes = new ArrayList<>();
            Tail tail = f.startTail("tail-dropped", outcomes);
            f.awaitStreaming();
            f.insert(ChangeKindsIT.id(1), "message", null, 1);
            f.awaitItem(ChangeKindsIT.id(1), true);

            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> {
                        try (Connection c = f.postgres();
                                Statement st = c.createStatement()) {
                            st.execute(
                                    "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = '"
                                            + f.slotName + "' AND active_pid IS NOT NULL");
                            st.execute("SELECT pg_drop_replication_slot('" + f.slotName + "')");
                            return true;
                        } catch (java.sql.SQLException stillActive) {
                            return false; // the walsender had not exited yet, or the tail reconnected first: again
                        }
                    });
            f.insert(ChangeKindsIT.id(2), "message", null, 2);

            assertStopped(outcomes.get(0), ErrorCode.TAIL_OFFSETS_GONE);
            assertThat(tail.stats().restarts()).as("it stopped, not looped").isLessThanOrEqualTo(1);
        }
    }

    @Test
    void aSlotInvalidatedByMaxSlotWalKeepSizeStopsTheTail() throws Exception {
        try (PrivatePostgres pg =
                        PrivatePostgres.start("max_slot_wal_keep_size=16MB", "max_wal_size=64MB", "min_wal_size=32MB");
                TailFixture f = new TailFixture(pg.jdbcUrl)) {
            List<Future<?>> outcomes = new ArrayList<>();
            Tail first = f.startTail("tail-before", outcomes);
            f.awaitStreaming();
            f.insert(ChangeKindsIT.id(1), "message", null, 1);
            f.awaitItem(ChangeKindsIT.id(1), true);
            first.close(); // stopped, as over a weekend: its slot keeps the WAL until Postgres gives up on it
            outcomes.get(0).get(30, TimeUnit.SECONDS);
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
                try (Connection c = f.postgres()) {
                    return !TailPreflight.slot(c, f.slotName).active();
                }
            });

            f.sql("CREATE TABLE filler (pad text)");
            for (int round = 0; round < 20 && !walStatus(f).equals("lost"); round++) {
                f.sql(
                        "INSERT INTO filler SELECT repeat(md5(g::text), 30) FROM generate_series(1, 20000) g",
                        "SELECT pg_switch_wal()",
                        "CHECKPOINT");
            }
            assertThat(walStatus(f)).as("Postgres invalidated the slot").isEqualTo("lost");

            f.startTail("tail-after", outcomes);
            assertStopped(outcomes.get(1), ErrorCode.TAIL_SLOT_LOST);
        }
    }

    private static void assertStopped(Future<?> outcome, ErrorCode... codes) {
        assertThatThrownBy(() -> outcome.get(60, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(RebalanceException.class)
                .satisfies(e -> assertThat(((RebalanceException) e).code()).isIn((Object[]) codes))
                .hasMessageContaining("rebalance tail --drop-slot");
    }

    private static String walStatus(TailFixture f) throws Exception {
        try (Connection c = f.postgres();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(
                        "SELECT wal_status FROM pg_replication_slots WHERE slot_name = '" + f.slotName + "'")) {
            return rs.next() ? rs.getString(1) : "missing";
        }
    }
}
