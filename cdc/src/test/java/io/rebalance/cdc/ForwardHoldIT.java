package io.rebalance.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rebalance.protocol.fence.FenceWriter;
import io.rebalance.protocol.fence.PostgresFence;
import io.rebalance.protocol.handoff.ForwardHold;
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
 * The cutover's hold on the forward tail (ADR 7, point 5): once acknowledged, every change committed before the noted
 * position is in DynamoDB, and nothing the tail sees afterwards (the reverse stream's writes to Postgres) reaches
 * DynamoDB until the hold is lifted.
 */
class ForwardHoldIT {
    @Test
    void theTailAppliesUpToTheNotedPositionThenWritesNothingUntilLifted() throws Exception {
        try (TailFixture f = new TailFixture()) {
            // a heartbeat slower than the test's bounds: only the noted position's own message can move the tail
            f.set("tail.heartbeat", "10m");
            List<Future<?>> outcomes = new ArrayList<>();
            Tail tail = f.startTail("hold", outcomes);
            f.awaitStreaming();
            ForwardHold hold =
                    new ForwardHold(f.redis, f.config().redis().keyspace().handoff());

            for (int i = 0; i < 30; i++) f.insert(ChangeKindsIT.id(i), "before", null, i);
            long noted = emitMarker(f);
            ForwardHold.Request request = hold.request(noted);
            assertThat(hold.awaitHeld(request, Duration.ofSeconds(30))).isTrue();
            // held means applied: read at once, no waiting
            for (int i = 0; i < 30; i++) assertThat(f.item(ChangeKindsIT.id(i))).isNotEmpty();
            assertThat(hold.state().phase()).isEqualTo(ForwardHold.Phase.HELD);

            // what the reverse stream would write to Postgres while DynamoDB is the write target
            f.insert(ChangeKindsIT.id(100), "after", null, 100);
            f.sql("UPDATE " + f.table + " SET kind = 'changed-while-held' WHERE id = '" + ChangeKindsIT.id(1) + "'");
            f.sql("DELETE FROM " + f.table + " WHERE id = '" + ChangeKindsIT.id(2) + "'");
            long after = emitMarker(f);
            await().atMost(Duration.ofSeconds(30)).until(() -> tail.stats().appliedLsn() >= after);
            assertThat(f.item(ChangeKindsIT.id(100))).as("insert while held").isEmpty();
            assertThat(f.item(ChangeKindsIT.id(1)).get("kind").s())
                    .as("update while held")
                    .isEqualTo("before");
            assertThat(f.item(ChangeKindsIT.id(2))).as("delete while held").isNotEmpty();
            assertThat(tail.stats().skippedWhileHeld()).isEqualTo(3);

            hold.lift();
            f.sql("UPDATE " + f.table + " SET kind = 'after-lift' WHERE id = '" + ChangeKindsIT.id(1) + "'");
            f.awaitItem(ChangeKindsIT.id(1), true);
            await().atMost(Duration.ofSeconds(30)).until(() -> "after-lift"
                    .equals(f.item(ChangeKindsIT.id(1)).get("kind").s()));
            assertThat(outcomes).noneMatch(Future::isDone);
        }
    }

    /**
     * The Postgres fence decides when Redis cannot (ADR 8): a hold a dead command left in Redis does not stop the
     * changes of applications Postgres admits; and with no hold in Redis (it lost its data), a fence that admits only
     * the reverse stream holds the tail at the position where it closed.
     */
    @Test
    void thePostgresFenceOverridesAHoldLeftInRedisAndHoldsTheTailWhenRedisHasNone() throws Exception {
        try (TailFixture f = new TailFixture()) {
            f.set("tail.heartbeat", "10m");
            String fenceTable = "public." + f.table + "_fence";
            f.set("cutover.pgFence", fenceTable);
            PostgresFence fence = new PostgresFence(fenceTable);
            try (Connection c = f.services.postgres()) {
                fence.install(c, f.table);
            }
            List<Future<?>> outcomes = new ArrayList<>();
            Tail tail = f.startTail("fence-hold", outcomes);
            f.awaitStreaming();
            ForwardHold hold =
                    new ForwardHold(f.redis, f.config().redis().keyspace().handoff());
            ForwardHold.Request stale = hold.request(emitMarker(f));
            hold.acknowledge(stale, stale.lsn()); // as a tail did for a cutover that then died

            f.insert(ChangeKindsIT.id(1), "open-to-applications", null, 1);
            f.awaitItem(ChangeKindsIT.id(1), true);

            hold.lift();
            try (Connection c = f.services.postgres()) {
                fence.set(c, f.table, FenceWriter.REVERSE, 5, Duration.ofSeconds(5));
            }
            f.sql("UPDATE " + f.table + " SET kind = 'reverse-stream' WHERE id = '" + ChangeKindsIT.id(1) + "'");
            long after = emitMarker(f);
            await().atMost(Duration.ofSeconds(30)).until(() -> tail.stats().appliedLsn() >= after);
            assertThat(f.item(ChangeKindsIT.id(1)).get("kind").s())
                    .as("a change after the fence closed, with no hold in Redis")
                    .isEqualTo("open-to-applications");
            assertThat(tail.stats().skippedWhileHeld()).isEqualTo(1);

            try (Connection c = f.services.postgres()) {
                fence.set(c, f.table, FenceWriter.APP, 6, Duration.ofSeconds(5));
            }
            f.sql("UPDATE " + f.table + " SET kind = 'reopened' WHERE id = '" + ChangeKindsIT.id(1) + "'");
            await().atMost(Duration.ofSeconds(30)).until(() -> "reopened"
                    .equals(f.item(ChangeKindsIT.id(1)).get("kind").s()));
            assertThat(outcomes).noneMatch(Future::isDone);
        }
    }

    /** What the cutover does to note a position: a logical message, decoded at once even on an idle table. */
    static long emitMarker(TailFixture f) throws Exception {
        try (Connection c = f.services.postgres();
                Statement st = c.createStatement();
                ResultSet rs =
                        st.executeQuery("SELECT pg_logical_emit_message(false, 'rebalance.cutover', '')::text")) {
            rs.next();
            return Lsn.parse(rs.getString(1));
        }
    }
}
