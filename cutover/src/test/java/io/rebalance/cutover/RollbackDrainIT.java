package io.rebalance.cutover;

import static io.rebalance.cutover.CutoverIT.MATCH;
import static io.rebalance.cutover.CutoverIT.PASS;
import static io.rebalance.cutover.CutoverIT.kind;
import static io.rebalance.cutover.CutoverIT.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.rebalance.client.WriteGuard;
import io.rebalance.core.dynamo.DynamoClients;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.route.RouteStatus;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;

/**
 * A rollback reopens Postgres only once it has compared every key applications wrote to DynamoDB since the flip
 * with its row (ADR 9), instead of trusting one reverse-stream round to have seen them: DynamoDB Streams on AWS
 * promises no delivery time.
 */
class RollbackDrainIT {
    private static final Duration DELAY = Duration.ofSeconds(5);

    /**
     * A key that never compares equal (here an item whose slot attribute is not the one its id gives, which the
     * reverse stream cannot mend) keeps Postgres closed: the rollback aborts at its budget, names the key, and the
     * route stays TARGET with the stores aligned to it.
     */
    @Test
    void aDifferenceThatNeverSettlesAbortsTheRollbackAndNamesTheKey() throws Exception {
        try (CutoverFixture f = new CutoverFixture(SharedServices.get().redisUrl, Duration.ofSeconds(4));
                WriteGuard guard = f.guard()) {
            f.startTail();
            f.cutover("forward").cutover(PASS, MATCH);
            String odd = "01JAXT00000000000000000001"; // its id says 2024-10-23T23, its item says slot 20241020.02
            guard.run(f.table, permit -> permit.writeDynamo(f.dynamo, CutoverIT.guardedPut(f, odd)));

            assertThatThrownBy(() -> f.cutover("back").rollback(f.proof()))
                    .isInstanceOf(RebalanceException.class)
                    .hasMessageContaining("1 of the keys written to DynamoDB since the flip still differ")
                    .hasMessageContaining(odd)
                    .hasMessageContaining("Routing is unchanged (TARGET)");
            assertThat(f.parts.routes().get(f.table).orElseThrow().status()).isEqualTo(RouteStatus.TARGET);
            CutoverIT.assertAligned(f, RouteStatus.TARGET, 0);
        }
    }

    /**
     * Absent equals NULL: an application writing under TARGET leaves a nullable attribute out rather than writing
     * NULL. The reverse stream writes NULL into that column, and the rollback compares the two as equal (before, the
     * canonical encoding hashed the absent attribute apart from NULL and every rollback aborted with "still differ").
     */
    @Test
    void anItemWithoutANullableAttributeComparesEqualToItsRowWithNullThere() throws Exception {
        try (CutoverFixture f = new CutoverFixture(SharedServices.get().redisUrl, Duration.ofSeconds(30));
                WriteGuard guard = f.guard()) {
            f.startTail();
            f.cutover("forward").cutover(PASS, MATCH);
            String id = "01JAKTE878" + "0000000000000ABS"; // 2024-10-20T02, as guardedPut's slot attribute says
            var put = CutoverIT.guardedPut(f, id);
            var item = new java.util.HashMap<>(put.put().item());
            item.remove("data"); // a nullable jsonb column, left out
            guard.run(
                    f.table,
                    permit -> permit.writeDynamo(
                            f.dynamo,
                            put.toBuilder()
                                    .put(put.put().toBuilder().item(item).build())
                                    .build()));

            CutoverOutcome back = f.cutover("back").rollback(f.proof());

            assertThat(back.detail()).contains("1 keys written to DynamoDB since the flip equal in Postgres");
            assertThat(f.parts.routes().get(f.table).orElseThrow().status()).isEqualTo(RouteStatus.SOURCE);
            assertThat(kind(f, id)).isEqualTo("guarded");
        }
    }

    /**
     * A reverse-stream round that reads for longer than a rollback lets a report age (a backlog after the flip, a slow
     * DynamoDB) still counts as running: the round says it is alive as it goes. Each GetRecords here takes 2 s, so by
     * the end of a round's second read the last round's report is over 4 s old, past the 3 s allowed below; the
     * stream is judged at that moment, mid-round. Before, a rollback meeting such a round was refused ("it last
     * reported ... ago: start `rebalance tail`") while the tail ran.
     */
    @Test
    void aRoundLongerThanTheFreshnessLimitStillCountsAsRunning() throws Exception {
        List<Optional<String>> verdicts = new CopyOnWriteArrayList<>();
        AtomicReference<StalledStreams> stalled = new AtomicReference<>();
        try (CutoverFixture f = new CutoverFixture(SharedServices.get().redisUrl, Duration.ofSeconds(30));
                WriteGuard guard = f.guard()) {
            ReverseStreamView view =
                    new ReverseStreamView(f.redis, f.config().redis().keyspace().handoff(), Duration.ofSeconds(3));
            f.startTail(dynamo -> {
                stalled.set(new StalledStreams(
                        DynamoClients.streamsOf(dynamo), Duration.ofSeconds(2), () -> verdicts.add(view.notReady())));
                return stalled.get();
            });
            f.cutover("forward").cutover(PASS, MATCH);
            stalled.get().arm();
            List<String> written = new ArrayList<>();
            for (int i = 0; i < 20; i++) written.add(write(f, guard));

            await().atMost(Duration.ofSeconds(60)).until(() -> !verdicts.isEmpty());
            assertThat(verdicts).as("the stream judged mid-round").allSatisfy(v -> assertThat(v)
                    .isEmpty());
            CutoverOutcome back = f.cutover("back").rollback(f.proof());
            assertThat(back.detail()).contains("20 keys written to DynamoDB since the flip equal in Postgres");
            for (String id : written) assertThat(kind(f, id)).isEqualTo("guarded");
        }
    }

    @Test
    void streamRecordsDelayedFiveSecondsAreWaitedForNotLost() throws Exception {
        AtomicReference<DelayedStreams> delayed = new AtomicReference<>();
        try (CutoverFixture f = new CutoverFixture(SharedServices.get().redisUrl, Duration.ofSeconds(30));
                WriteGuard guard = f.guard()) {
            f.startTail(dynamo -> {
                delayed.set(new DelayedStreams(DynamoClients.streamsOf(dynamo), DELAY));
                return delayed.get();
            });
            f.cutover("forward").cutover(PASS, MATCH);
            List<String> written = new ArrayList<>();
            for (int i = 0; i < 20; i++) written.add(write(f, guard));

            CutoverOutcome back = f.cutover("back").rollback(f.proof());

            assertThat(f.parts.routes().get(f.table).orElseThrow().status()).isEqualTo(RouteStatus.SOURCE);
            for (String id : written) {
                assertThat(kind(f, id))
                        .as("%s, acknowledged by DynamoDB, is in Postgres when the rollback reopens it", id)
                        .isEqualTo("guarded");
            }
            assertThat(delayed.get().heldBack())
                    .as("reads that met a record not due yet")
                    .isPositive();
            assertThat(back.detail())
                    .contains("20 keys written to DynamoDB since the flip equal in Postgres")
                    .containsPattern("after \\d+ compares \\(20 differed at the first\\)");
        }
    }

    /**
     * A reverse-stream batch that read a key's item before DynamoDB closed, and is held at its write to Postgres (the
     * test locks the row), is waited for before the keys are compared. The key was written back to the value Postgres
     * holds, so a comparison that did not wait would find it equal and reopen Postgres; the held batch would then
     * commit the older value, and the record of the last write, arriving after Postgres reopened, would be passed
     * over: Postgres would keep a value DynamoDB no longer has.
     */
    @Test
    void aBatchThatReadAnItemBeforeDynamoDbClosedIsWaitedForBeforeTheCompare() throws Exception {
        try (CutoverFixture f = new CutoverFixture(SharedServices.get().redisUrl, Duration.ofSeconds(30));
                WriteGuard guard = f.guard()) {
            f.startTail();
            f.cutover("forward").cutover(PASS, MATCH);
            String id = "01JAKTE878" + "0000000000000STA"; // 2024-10-20T02, as guardedPut's slot attribute says
            guard.run(f.table, permit -> permit.writeDynamo(f.dynamo, put(f, id, "first")));
            await().atMost(Duration.ofSeconds(30)).until(() -> "first".equals(kind(f, id)));

            ExecutorService rollback = Executors.newSingleThreadExecutor();
            try (Connection holder = f.services.postgres()) {
                holder.setAutoCommit(false);
                try (PreparedStatement ps =
                        holder.prepareStatement("SELECT 1 FROM " + f.table + " WHERE id = ? FOR UPDATE")) {
                    ps.setString(1, id);
                    ps.executeQuery().close();
                }
                guard.run(f.table, permit -> permit.writeDynamo(f.dynamo, put(f, id, "second")));
                await("the batch carrying 'second' waits for the row")
                        .atMost(Duration.ofSeconds(30))
                        .until(() -> waiting(f, "wait_event IN ('transactionid', 'tuple')") > 0);
                guard.run(f.table, permit -> permit.writeDynamo(f.dynamo, put(f, id, "first")));

                Future<CutoverOutcome> back =
                        rollback.submit(() -> f.cutover("back").rollback(f.proof()));
                await("the rollback waits for the fence's lock")
                        .atMost(Duration.ofSeconds(30))
                        .until(() -> waiting(f, "wait_event = 'advisory'") > 0);
                holder.rollback(); // the held batch writes 'second' now

                assertThat(back.get(60, TimeUnit.SECONDS).detail())
                        .contains("1 keys written to DynamoDB since the flip equal in Postgres");
            } finally {
                rollback.shutdownNow();
            }
            assertThat(f.parts.routes().get(f.table).orElseThrow().status()).isEqualTo(RouteStatus.SOURCE);
            assertThat(kind(f, id)).as("Postgres holds DynamoDB's last value").isEqualTo("first");
        }
    }

    /** The application's item for {@code id}, the same every time for the same kind. */
    private static TransactWriteItem put(CutoverFixture f, String id, String kind) {
        TransactWriteItem put = CutoverIT.guardedPut(f, id);
        Map<String, AttributeValue> item = new HashMap<>(put.put().item());
        item.put("kind", AttributeValue.fromS(kind));
        item.put("room_id", AttributeValue.fromS("5e2a2b1c-1f6b-4f6e-9a59-2f0d7a3c6b10"));
        return put.toBuilder().put(put.put().toBuilder().item(item).build()).build();
    }

    /** Backends of this database waiting for a lock of the kind {@code condition} names. */
    private static int waiting(CutoverFixture f, String condition) throws Exception {
        try (Connection c = f.services.postgres();
                PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE"
                        + " datname = current_database() AND wait_event_type = 'Lock' AND " + condition)) {
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }
}
