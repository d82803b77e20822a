package io.rebalance.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.protocol.handoff.Lsn;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * What other commands wait on: once a running tail's published position passes a WAL position, every change
 * committed before it is in DynamoDB, with no further wait; heartbeats move the position on an idle table; and
 * without a running tail the wait says so at once instead of waiting out its bound.
 */
class TailProgressIT {
    @Test
    void thePublishedPositionBoundsWhatIsInDynamoDb() throws Exception {
        try (TailFixture f = new TailFixture()) {
            f.set("tail.heartbeat", "500ms");
            TailProgress progress =
                    new TailProgress(f.redis, f.config().redis().keyspace().tail());
            assertThat(progress.awaitApplied(1, Duration.ofMinutes(1)))
                    .as("no tail runs")
                    .isFalse();

            List<Future<?>> outcomes = new ArrayList<>();
            Tail tail = f.startTail("tail-progress", outcomes);
            f.awaitStreaming();
            for (int round = 1; round <= 5; round++) {
                for (int i = 0; i < 40; i++) f.insert(ChangeKindsIT.id(round * 100 + i), "message", null, i);
                f.sql("DELETE FROM " + f.table + " WHERE id = '" + ChangeKindsIT.id(round * 100) + "'");
                long committed = Lsn.parse(currentLsn(f));
                assertThat(progress.awaitApplied(committed, Duration.ofSeconds(60)))
                        .isTrue();
                // read right away, no waiting: the position promised these are there
                assertThat(f.item(ChangeKindsIT.id(round * 100 + 39))).isNotEmpty();
                assertThat(f.item(ChangeKindsIT.id(round * 100))).isEmpty();
            }
            // nothing changes in the table now: heartbeats alone carry the position past the server's
            long idle = Lsn.parse(currentLsn(f));
            assertThat(progress.awaitApplied(idle, Duration.ofSeconds(30))).isTrue();
            assertThat(tail.stats().appliedLsn()).isGreaterThanOrEqualTo(idle);
            assertThat(outcomes).noneMatch(Future::isDone);
        }
    }

    private static String currentLsn(TailFixture f) throws Exception {
        try (Connection c = f.services.postgres();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT pg_current_wal_lsn()::text")) {
            rs.next();
            return rs.getString(1);
        }
    }
}
