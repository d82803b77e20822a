package io.rebalance.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rebalance.core.dynamo.TargetTable;
import io.rebalance.protocol.fence.FenceWriter;
import io.rebalance.protocol.fence.PostgresFence;
import io.rebalance.protocol.handoff.ForwardHold;
import io.rebalance.protocol.handoff.ReverseDrain;
import io.rebalance.protocol.keyspace.HandoffKeys;
import io.rebalance.protocol.route.RouteStatus;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The reverse stream against a real DynamoDB Stream and Postgres: it reads along without writing while Postgres is
 * the store of record; once a cutover has closed the Postgres fence and holds the forward tail, every application
 * write to DynamoDB (insert, update, delete) is in Postgres by the time a drain is answered; it resumes from saved
 * positions after a restart; an item it cannot write back stops it (named in status) instead of being dropped.
 */
class ReverseStreamIT {
    private static final Duration BOUND = Duration.ofSeconds(30);

    @Test
    void writesBackApplicationWritesOnlyWhileTheGateIsOpenAndAnswersDrainsInOrder() throws Exception {
        try (TailFixture f = new TailFixture()) {
            String fenceTable = "public." + f.table + "_fence";
            f.set("cutover.pgFence", fenceTable);
            PostgresFence fence = new PostgresFence(fenceTable);
            try (Connection c = f.services.postgres()) {
                fence.install(c, f.table);
            }
            assertThat(TargetTable.enableStream(f.dynamo, f.table)).isTrue();
            HandoffKeys keys = f.config().redis().keyspace().handoff();
            ReverseDrain drain = new ReverseDrain(f.redis, keys);
            ForwardHold hold = new ForwardHold(f.redis, keys);
            List<Future<?>> outcomes = new ArrayList<>();
            Tail first = f.startTail("reverse-a", outcomes);
            f.awaitStreaming();

            // Postgres is the store of record: the forward tail's own writes stream back and are skipped
            for (int i = 0; i < 20; i++) f.insert(ChangeKindsIT.id(i), "forward", "{\"n\": " + i + "}", i);
            f.awaitItem(ChangeKindsIT.id(19), true);
            drained(drain);
            assertThat(status(f, keys, "skipped")).isGreaterThanOrEqualTo(20);
            assertThat(status(f, keys, "applied")).isZero();

            // the cutover: Postgres fence closed to applications, forward tail held
            try (Connection c = f.services.postgres()) {
                fence.set(c, f.table, FenceWriter.REVERSE, 10, Duration.ofSeconds(5));
            }
            assertThat(hold.awaitHeld(hold.request(ForwardHoldIT.emitMarker(f)), BOUND))
                    .isTrue();

            // application writes, now to DynamoDB
            put(f, ChangeKindsIT.id(100), "app-insert", f.item(ChangeKindsIT.id(0)));
            put(f, ChangeKindsIT.id(1), "app-update", f.item(ChangeKindsIT.id(1)));
            f.dynamo.deleteItem(b -> b.tableName(f.table).key(key(ChangeKindsIT.id(2))));
            drained(drain);
            // answered means written: read at once
            assertThat(kind(f, ChangeKindsIT.id(100))).isEqualTo("app-insert");
            assertThat(row(f, ChangeKindsIT.id(100)))
                    .isEqualTo(row(f, ChangeKindsIT.id(0)).replace("forward", "app-insert"));
            assertThat(kind(f, ChangeKindsIT.id(1))).isEqualTo("app-update");
            assertThat(kind(f, ChangeKindsIT.id(2))).as("deleted in DynamoDB").isNull();

            // a restarted tail resumes from the saved positions
            first.close();
            await().atMost(BOUND).until(() -> outcomes.get(0).isDone());
            put(f, ChangeKindsIT.id(150), "while-down", f.item(ChangeKindsIT.id(0)));
            f.startTail("reverse-b", outcomes);
            drained(drain);
            assertThat(kind(f, ChangeKindsIT.id(150))).isEqualTo("while-down");

            // an item Postgres has no place for stops the stream, named, and is not dropped
            Map<String, AttributeValue> odd = new HashMap<>(f.item(ChangeKindsIT.id(0)));
            odd.put("id", AttributeValue.fromS(ChangeKindsIT.id(160)));
            odd.put("bogus", AttributeValue.fromS("x"));
            f.dynamo.putItem(b -> b.tableName(f.table).item(odd));
            await().atMost(BOUND).until(() -> String.valueOf(f.redis.hget(keys.reverseStatus(), "last_error"))
                    .contains("'bogus'"));
            assertThat(kind(f, ChangeKindsIT.id(160))).isNull();
            // failing, not "streaming": status and a rollback's refusal name the error
            assertThat(f.redis.hget(keys.reverseStatus(), "state")).isEqualTo("failing");
            assertThat(f.redis.hget(keys.reverseStatus(), "failing_since_ms")).isNotNull();
            put(f, ChangeKindsIT.id(160), "fixed", f.item(ChangeKindsIT.id(0)));
            drained(drain);
            assertThat(kind(f, ChangeKindsIT.id(160))).isEqualTo("fixed");
            await().atMost(BOUND).untilAsserted(() -> {
                assertThat(f.redis.hget(keys.reverseStatus(), "state")).isEqualTo("streaming");
                assertThat(f.redis.hget(keys.reverseStatus(), "failing_since_ms"))
                        .isNull();
            });

            // rollback gives Postgres back: the gate closes, and DynamoDB writes no longer reach Postgres
            try (Connection c = f.services.postgres()) {
                fence.set(c, f.table, FenceWriter.APP, 11, Duration.ofSeconds(5));
            }
            hold.lift();
            put(f, ChangeKindsIT.id(200), "after-rollback", f.item(ChangeKindsIT.id(0)));
            drained(drain);
            assertThat(kind(f, ChangeKindsIT.id(200))).isNull();

            // a closed fence alone is not enough: while the forward tail has not acknowledged, nothing is written;
            // in a cutover's window (no flip recorded) the records are the forward tail's own writes and pass
            try (Connection c = f.services.postgres()) {
                fence.set(c, f.table, FenceWriter.REVERSE, 12, Duration.ofSeconds(5));
            }
            ForwardHold.Request pending = hold.request(Long.MAX_VALUE);
            put(f, ChangeKindsIT.id(300), "not-held-yet", f.item(ChangeKindsIT.id(0)));
            drained(drain);
            assertThat(kind(f, ChangeKindsIT.id(300))).isNull();

            // once a flip to DynamoDB is recorded, the forward tail holds outright, whatever Redis says (ADR 8, point
            // 5: it applied everything before DynamoDB opened): the reverse stream writes the application's record,
            // and the tail answers the request Redis still holds open
            try (Connection c = f.services.postgres()) {
                fence.record(c, f.table, RouteStatus.TARGET, 2, Long.MAX_VALUE, Duration.ofSeconds(5));
            }
            put(f, ChangeKindsIT.id(301), "flipped", f.item(ChangeKindsIT.id(0)));
            drained(drain);
            assertThat(kind(f, ChangeKindsIT.id(301))).isEqualTo("flipped");
            assertThat(hold.awaitHeld(pending, BOUND))
                    .as("the open request answered")
                    .isTrue();
            assertThat(f.redis.hget(keys.reverseStatus(), "state")).isEqualTo("streaming");
            assertThat(f.redis.hget(keys.reverseStatus(), "lag_ms")).isNotNull();
            assertThat(outcomes.subList(1, outcomes.size())).noneMatch(Future::isDone);
        }
    }

    static void drained(ReverseDrain drain) throws InterruptedException {
        assertThat(drain.awaitDrained(drain.request(), BOUND))
                .as("drain answered")
                .isTrue();
    }

    private static long status(TailFixture f, HandoffKeys keys, String field) {
        return Long.parseLong(f.redis.hget(keys.reverseStatus(), field));
    }

    private static Map<String, AttributeValue> key(String id) {
        return Map.of("id", AttributeValue.fromS(id));
    }

    /** An application's put: {@code like} with another id and kind. */
    static void put(TailFixture f, String id, String kind, Map<String, AttributeValue> like) {
        Map<String, AttributeValue> item = new HashMap<>(like);
        item.put("id", AttributeValue.fromS(id));
        item.put("kind", AttributeValue.fromS(kind));
        f.dynamo.putItem(b -> b.tableName(f.table).item(item));
    }

    static String kind(TailFixture f, String id) throws Exception {
        try (Connection c = f.services.postgres();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT kind FROM " + f.table + " WHERE id = '" + id + "'")) {
            return rs.next() ? rs.getString(1) : null;
        }
    }

    /** Every column but the id, as text. */
    private static String row(TailFixture f, String id) throws Exception {
        try (Connection c = f.services.postgres();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(
                        "SELECT room_id, kind, data, created_at, seq FROM " + f.table + " WHERE id = '" + id + "'")) {
            rs.next();
            return rs.getString(1) + "|" + rs.getString(2) + "|" + rs.getString(3) + "|" + rs.getString(4) + "|"
                    + rs.getString(5);
        }
    }
}
