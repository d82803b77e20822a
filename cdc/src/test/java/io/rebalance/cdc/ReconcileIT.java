package io.rebalance.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.copy.RunPlan;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.slot.Ulid;
import io.rebalance.protocol.keyspace.RunKeys;
import io.rebalance.testkit.RoomEventsComparison;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The race ADR 6 is about: the tail applies a change, then a backfill page read before that change lands and puts
 * the older row back. The key was recorded as touched while its slot was unfinished, and once the slot is finished
 * the tail writes it again from Postgres. A key in a slot already finished is not recorded at all.
 */
class ReconcileIT {
    @Test
    void aBackfillPutThatLandsAfterTheTailIsUndoneOnceItsSlotFinishes() throws Exception {
        try (TailFixture f = new TailFixture()) {
            List<Future<?>> outcomes = new ArrayList<>();
            Tail tail = f.startTail("tail-r", outcomes);
            f.awaitStreaming();
            String unfinishedId = ChangeKindsIT.id(1); // slot 20241020.02
            String finishedId =
                    Ulid.of(java.time.Instant.parse("2024-10-20T04:10:00Z").toEpochMilli(), 0, 9);
            RunKeys run = f.config().redis().keyspace().run();
            f.redis.set(
                    run.plan(),
                    new RunPlan(
                                    f.table,
                                    "id",
                                    f.table,
                                    "",
                                    "us-east-1",
                                    "20241020.04",
                                    "20241020.00",
                                    10,
                                    0,
                                    null,
                                    false)
                            .toJson()); // what the first copy process does
            f.redis.hset(run.slotState(Slot.parse("20241020.04").name()), "status", "FINISHED");

            f.insert(unfinishedId, "message", "{\"v\":1}", 1);
            f.insert(finishedId, "message", "{\"v\":1}", 1);
            f.awaitItem(finishedId, true);
            Map<String, AttributeValue> read = f.item(unfinishedId); // what a backfill page read now would hold
            f.sql("UPDATE " + f.table + " SET kind = 'edited', seq = 2 WHERE id = '" + unfinishedId + "'");
            f.insert(ChangeKindsIT.id(50), "marker", null, 0);
            f.awaitItem(ChangeKindsIT.id(50), true);
            assertThat(f.item(unfinishedId).get("kind").s()).isEqualTo("edited");

            Map<String, AttributeValue> stale = new HashMap<>(read);
            f.dynamo.putItem(b -> b.tableName(f.table).item(stale)); // the backfill's put lands late
            assertThat(f.redis.smembers(tail.keys().touched("20241020.02")))
                    .contains(unfinishedId, ChangeKindsIT.id(50));
            assertThat(f.redis.exists(tail.keys().touched("20241020.04"))).isFalse();
            assertThat(f.item(unfinishedId).get("kind").s()).isEqualTo("message"); // not before the slot finishes

            f.redis.hset(run.slotState(Slot.parse("20241020.02").name()), "status", "FINISHED");
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> "edited"
                    .equals(f.item(unfinishedId).get("kind").s()));
            Awaitility.await()
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> !f.redis.exists(tail.keys().touched("20241020.02")));
            assertThat(tail.stats().reconciled()).isGreaterThanOrEqualTo(2);
            try (Connection pg = f.services.postgres()) {
                assertThat(RoomEventsComparison.differences(pg, f.table, f.dynamo, f.table))
                        .isEmpty();
            }
        }
    }
}
