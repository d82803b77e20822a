package io.rebalance.cdc;

import static io.rebalance.cdc.ForwardHoldIT.emitMarker;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rebalance.core.dynamo.TargetTable;
import io.rebalance.protocol.fence.FenceWriter;
import io.rebalance.protocol.fence.PostgresFence;
import io.rebalance.protocol.handoff.BypassedWrites;
import io.rebalance.protocol.handoff.ForwardHold;
import io.rebalance.protocol.handoff.KeyLog;
import io.rebalance.protocol.handoff.ReverseDrain;
import io.rebalance.protocol.keyspace.HandoffKeys;
import io.rebalance.protocol.part.PartMap;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The forward tail holds a table moved part by part one part at a time (ADR 20): a part's hold, asked in Redis or
 * implied by the part's Postgres fence, holds the changes of that part's rows only, while every other part's flow on;
 * each part has its own acknowledgement, key log and record of writes that bypassed the fence, and a part's bypassing
 * writes are written once its own hold is lifted; the reverse stream writes back the part in its window only.
 */
class PartedHoldIT {
    private static final String PARTS = "[{name: a, hashFrom: 0, hashTo: 50}, {name: b}]";
    private static final int ROWS = 40;

    @Test
    void aPartsHoldHoldsItsRowsOnlyAndKeepsItsOwnLogs() throws Exception {
        try (TailFixture f = new TailFixture()) {
            f.set("tail.heartbeat", "10m").set("cutover.parts", PARTS);
            List<Future<?>> outcomes = new ArrayList<>();
            Tail tail = f.startTail("parted-hold", outcomes);
            f.awaitStreaming();
            List<List<String>> ids = idsByPart(f);
            HandoffKeys handoff = f.config().redis().keyspace().handoff();
            for (int i = 0; i < ROWS; i++) f.insert(ChangeKindsIT.id(i), "before", null, i);

            // each part's key log takes the keys of its rows only
            KeyLog logA = new KeyLog(f.redis, handoff.part("a"));
            KeyLog logB = new KeyLog(f.redis, handoff.part("b"));
            String genA = logA.start(Duration.ofMinutes(1));
            String genB = logB.start(Duration.ofMinutes(1));
            f.sql("UPDATE " + f.table + " SET kind = 'logged'");
            long logged = emitMarker(f);
            await().atMost(Duration.ofSeconds(30)).until(() -> tail.stats().appliedLsn() >= logged);
            assertThat(logA.keys(genA)).containsExactlyInAnyOrderElementsOf(ids.get(0));
            assertThat(logB.keys(genB)).containsExactlyInAnyOrderElementsOf(ids.get(1));

            ForwardHold holdA = new ForwardHold(f.redis, handoff.part("a"));
            ForwardHold holdB = new ForwardHold(f.redis, handoff.part("b"));
            ForwardHold.Request request = holdB.request(emitMarker(f));
            assertThat(holdB.awaitHeld(request, Duration.ofSeconds(30))).isTrue();
            assertThat(holdA.state().phase()).as("part a is not held").isEqualTo(ForwardHold.Phase.NONE);

            f.sql("UPDATE " + f.table + " SET kind = 'during'"); // plain writes: they bypass any fence
            long during = emitMarker(f);
            await().atMost(Duration.ofSeconds(30)).until(() -> tail.stats().appliedLsn() >= during);
            for (String id : ids.get(0))
                assertThat(f.item(id).get("kind").s()).as(id).isEqualTo("during");
            for (String id : ids.get(1))
                assertThat(f.item(id).get("kind").s()).as(id).isEqualTo("logged");
            assertThat(tail.stats().skippedWhileHeld()).isEqualTo(ids.get(1).size());
            assertThat(new BypassedWrites(f.redis, handoff.part("b"))
                            .read()
                            .keys()
                            .keySet())
                    .containsExactlyInAnyOrderElementsOf(ids.get(1));
            assertThat(new BypassedWrites(f.redis, handoff.part("a")).any()).isFalse();

            holdB.lift(); // its bypassing writes are written now, as Postgres holds them
            await().atMost(Duration.ofSeconds(30)).until(() -> ids.get(1).stream()
                    .allMatch(id -> "during".equals(f.item(id).get("kind").s())));
            assertThat(outcomes).noneMatch(Future::isDone);
        }
    }

    @Test
    void aPartsFenceHoldsItsRowsWhenRedisHasNoHold() throws Exception {
        try (TailFixture f = new TailFixture()) {
            PostgresFence fence = fencedParts(f);
            String b = scope(f, "b");
            try (Connection c = f.services.postgres()) {
                fence.set(c, b, FenceWriter.REVERSE, 5, Duration.ofSeconds(5));
            }
            List<Future<?>> outcomes = new ArrayList<>();
            Tail tail = f.startTail("parted-fence", outcomes);
            f.awaitStreaming();
            List<List<String>> ids = idsByPart(f);
            for (int i = 0; i < ROWS; i++) f.insert(ChangeKindsIT.id(i), "while-b-fenced", null, i);
            long after = emitMarker(f);
            await().atMost(Duration.ofSeconds(30)).until(() -> tail.stats().appliedLsn() >= after);
            for (String id : ids.get(0))
                assertThat(f.item(id)).as(id + " of part a").isNotEmpty();
            for (String id : ids.get(1))
                assertThat(f.item(id)).as(id + " of fenced part b").isEmpty();

            try (Connection c = f.services.postgres()) {
                fence.set(c, b, FenceWriter.APP, 6, Duration.ofSeconds(5));
            }
            f.sql("UPDATE " + f.table + " SET kind = 'reopened'");
            await().atMost(Duration.ofSeconds(30)).until(() -> ids.get(1).stream()
                    .allMatch(id -> !f.item(id).isEmpty()
                            && "reopened".equals(f.item(id).get("kind").s())));
            assertThat(outcomes).noneMatch(Future::isDone);
        }
    }

    /**
     * The reverse stream writes back by part: with part b's fence at {@code reverse} and the tail holding b, the
     * application's DynamoDB writes to b's rows reach Postgres, while DynamoDB writes to a's rows (the forward tail's
     * own, a being on SOURCE) do not.
     */
    @Test
    void theReverseStreamWritesBackThePartInItsWindowOnly() throws Exception {
        try (TailFixture f = new TailFixture()) {
            PostgresFence fence = fencedParts(f);
            assertThat(TargetTable.enableStream(f.dynamo, f.table)).isTrue();
            HandoffKeys handoff = f.config().redis().keyspace().handoff();
            ReverseDrain drain = new ReverseDrain(f.redis, handoff);
            List<Future<?>> outcomes = new ArrayList<>();
            f.startTail("parted-reverse", outcomes);
            f.awaitStreaming();
            List<List<String>> ids = idsByPart(f);
            for (int i = 0; i < ROWS; i++) f.insert(ChangeKindsIT.id(i), "forward", null, i);
            for (int i = 0; i < ROWS; i++) f.awaitItem(ChangeKindsIT.id(i), true);

            try (Connection c = f.services.postgres()) {
                fence.set(c, scope(f, "b"), FenceWriter.REVERSE, 10, Duration.ofSeconds(5));
            }
            ForwardHold holdB = new ForwardHold(f.redis, handoff.part("b"));
            assertThat(holdB.awaitHeld(holdB.request(emitMarker(f)), Duration.ofSeconds(30)))
                    .isTrue();
            Map<String, AttributeValue> like = f.item(ChangeKindsIT.id(0));
            for (int i = 0; i < ROWS; i++) ReverseStreamIT.put(f, ChangeKindsIT.id(i), "in-dynamodb", like);
            ReverseStreamIT.drained(drain);
            for (String id : ids.get(1))
                assertThat(ReverseStreamIT.kind(f, id)).as(id).isEqualTo("in-dynamodb");
            for (String id : ids.get(0))
                assertThat(ReverseStreamIT.kind(f, id)).as(id).isEqualTo("forward");
            assertThat(outcomes).noneMatch(Future::isDone);
        }
    }

    /** Parts a and b with a Postgres fence row each, open to applications (as `cutover --prepare` leaves them). */
    private static PostgresFence fencedParts(TailFixture f) throws Exception {
        String fenceTable = "public." + f.table + "_fence";
        f.set("tail.heartbeat", "10m").set("cutover.parts", PARTS).set("cutover.pgFence", fenceTable);
        PostgresFence fence = new PostgresFence(fenceTable);
        try (Connection c = f.services.postgres()) {
            for (String part : List.of("a", "b")) fence.install(c, scope(f, part));
        }
        return fence;
    }

    private static String scope(TailFixture f, String part) {
        return PartMap.scope(f.config().cutover().scope(), part);
    }

    /** The test's ids, split by the part each falls in: both parts get some. */
    private static List<List<String>> idsByPart(TailFixture f) {
        PartMap parts = f.config().cutover().partMap();
        List<List<String>> out = List.of(new ArrayList<>(), new ArrayList<>());
        for (int i = 0; i < ROWS; i++) {
            String id = ChangeKindsIT.id(i);
            out.get(parts.partOf(id).name().equals("a") ? 0 : 1).add(id);
        }
        assertThat(out).allSatisfy(ids -> assertThat(ids).isNotEmpty());
        return out;
    }
}
