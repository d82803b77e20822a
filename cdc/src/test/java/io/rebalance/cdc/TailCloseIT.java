package io.rebalance.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * A tail asked to stop while Debezium starts its task stops. Debezium refuses a close in that state; a refusal taken
 * as done left the engine streaming after {@code close()}, holding the replication slot, with no lease renewed.
 */
class TailCloseIT {
    @Test
    void aTailClosedWhileDebeziumStartsItsTaskStops() throws Exception {
        try (TailFixture f = new TailFixture();
                Connection open = f.postgres()) {
            open.setAutoCommit(false);
            int openPid;
            try (Statement st = open.createStatement();
                    ResultSet rs = st.executeQuery("SELECT pg_backend_pid(), txid_current()")) {
                rs.next();
                openPid = rs.getInt(1);
            }
            List<Future<?>> outcomes = new ArrayList<>();
            Tail tail = f.startTail("tail-closed-starting", outcomes);
            // The task's start creates the slot, and a logical slot is made only once every transaction that holds an
            // id has ended: while this one stays open, Debezium is starting its task.
            Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> waitsOn(f, openPid));

            tail.close();
            open.commit();

            Awaitility.await()
                    .atMost(Duration.ofSeconds(60))
                    .alias("the tail's run returns once its task started")
                    .until(() -> outcomes.get(0).isDone());
            outcomes.get(0).get(0, TimeUnit.SECONDS);
            try (Connection c = f.postgres()) {
                assertThat(TailPreflight.slot(c, f.slotName).active())
                        .as("no engine reads the slot")
                        .isFalse();
            }
        }
    }

    /** Whether a backend waits on the transaction of {@code pid}. */
    private static boolean waitsOn(TailFixture f, int pid) throws Exception {
        try (Connection c = f.postgres();
                PreparedStatement ps = c.prepareStatement(
                        "SELECT count(*) FROM pg_stat_activity WHERE ? = ANY (pg_blocking_pids(pid))")) {
            ps.setInt(1, pid);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1) > 0;
            }
        }
    }
}
