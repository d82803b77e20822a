package io.rebalance.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.copy.CopyProgress;
import io.rebalance.core.copy.ItemWriter;
import io.rebalance.core.dynamo.BatchWriter;
import io.rebalance.core.dynamo.DynamoClients;
import io.rebalance.core.dynamo.WritePacer;
import io.rebalance.core.refused.RefusedRows;
import io.rebalance.core.retry.Retrier;
import io.rebalance.core.source.PageReader;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.protocol.fence.PostgresFence;
import io.rebalance.protocol.handoff.BypassedWrites;
import io.rebalance.protocol.handoff.ForwardHold;
import io.rebalance.protocol.handoff.KeyLog;
import io.rebalance.protocol.keyspace.RunKeys;
import io.rebalance.protocol.keyspace.TailKeys;
import io.rebalance.protocol.part.PartMap;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;

/**
 * While a backlog drains, one batch's writes land while the next batch is read and sent (ChangeHandler). Each test
 * holds a write of the earlier batch in flight at an exact moment (an interceptor in front of DynamoDB Local) and
 * checks the promise the overlap must keep: a key's later write never lands before its earlier one, the key log never
 * tells a cutover that writes logged under an older generation are done while they land, and the offsets and a
 * cutover's hold are answered only once every write before them landed.
 */
class OverlappedBatchesIT {
    private static final Duration BOUND = Duration.ofSeconds(30);

    @Test
    void aKeyIsNotWrittenAgainWhileItsEarlierWriteLands() throws Exception {
        try (TailFixture f = new TailFixture();
                Rig rig = new Rig(f)) {
            String k = ChangeKindsIT.id(1);
            f.insert(k, "first", null, 1);
            SentBatch earlier = rig.applier.send(rig.none(), List.of(k), List.of(), key -> null);
            rig.stall.awaitHeld();
            f.sql("UPDATE " + f.table + " SET kind = 'second' WHERE id = '" + k + "'");

            Thread later =
                    rig.run(() -> rig.applier.land(rig.applier.send(rig.none(), List.of(k), List.of(), key -> null)));
            awaitBlockedOn(later, earlier.writes::contains);
            assertThat(later.isAlive())
                    .as("the later write of the key waits for the earlier one")
                    .isTrue();

            rig.stall.release();
            later.join(BOUND.toMillis());
            rig.applier.land(earlier);
            assertThat(rig.failures).isEmpty();
            assertThat(f.item(k).get("kind").s())
                    .as("the later read is the later write")
                    .isEqualTo("second");
        }
    }

    @Test
    void aNewKeyLogGenerationIsNotSeenWhileWritesLoggedBeforeItLand() throws Exception {
        try (TailFixture f = new TailFixture();
                Rig rig = new Rig(f)) {
            String k = ChangeKindsIT.id(1);
            String other = ChangeKindsIT.id(2);
            f.insert(k, "first", null, 1);
            f.insert(other, "other", null, 2);
            String first = rig.keyLog.start(Duration.ofMinutes(1));
            SentBatch earlier = rig.applier.send(rig.none(), List.of(k), List.of(), key -> null);
            rig.stall.awaitHeld();
            String gen = rig.keyLog.start(Duration.ofMinutes(1)); // a cutover's next round: k was logged under first

            Thread later = rig.run(
                    () -> rig.applier.land(rig.applier.send(rig.none(), List.of(other), List.of(), key -> null)));
            awaitBlockedOn(later, earlier.writes::contains);
            assertThat(rig.keyLog.awaitSeen(gen, Duration.ZERO, () -> false))
                    .as("the new generation is not seen while a write logged before it lands")
                    .isFalse();

            rig.stall.release();
            later.join(BOUND.toMillis());
            rig.applier.land(earlier);
            assertThat(rig.failures).isEmpty();
            assertThat(rig.keyLog.awaitSeen(gen, BOUND, () -> false)).isTrue();
            assertThat(rig.keyLog.keys(first)).containsExactly(k);
            assertThat(rig.keyLog.keys(gen)).containsExactly(other);
        }
    }

    @Test
    void aBatchIsMarkedAndAHoldAnsweredOnlyOnceTheWritesBeforeThemLanded() throws Exception {
        try (TailFixture f = new TailFixture();
                Rig rig = new Rig(f)) {
            List<String> ids = List.of(ChangeKindsIT.id(1), ChangeKindsIT.id(2), ChangeKindsIT.id(3));
            for (int i = 0; i < ids.size(); i++) f.insert(ids.get(i), "row", null, i);
            Marks marks = new Marks();
            ChangeHandler handler = rig.handler(2); // a batch of two is full: more is queued
            List<ChangeEvent<SourceRecord, SourceRecord>> full =
                    List.of(rig.change(ids.get(0), 100), rig.change(ids.get(1), 101));
            handler.handleBatch(full, marks);
            rig.stall.awaitHeld();
            assertThat(marks.marked)
                    .as("a full batch returns with its writes landing, unmarked")
                    .isEmpty();

            ForwardHold.Request request = rig.hold.request(150); // a cutover asks the tail to hold
            List<ChangeEvent<SourceRecord, SourceRecord>> next = List.of(rig.change(ids.get(2), 120), rig.beat(160));
            Thread later = rig.run(() -> handler.handleBatch(next, marks));
            awaitBlockedOn(later, blocker -> blocker instanceof FutureTask);
            assertThat(marks.marked).isEmpty();
            assertThat(rig.hold.state().phase())
                    .as("the hold is not answered while a write before it lands")
                    .isEqualTo(ForwardHold.Phase.REQUESTED);

            rig.stall.release();
            later.join(BOUND.toMillis());
            assertThat(rig.failures).isEmpty();
            assertThat(marks.marked).containsExactly(full.get(0), full.get(1), next.get(0), next.get(1));
            assertThat(rig.hold.awaitHeld(request, BOUND)).isTrue();
            assertThat(rig.stats.appliedLsn()).isEqualTo(160);
            for (String id : ids) assertThat(f.item(id)).isNotEmpty();
        }
    }

    @Test
    void aBatchWhoseWritesFailedWhileTheNextWasSentIsSentAgainAndMarkedInOrder() throws Exception {
        try (TailFixture f = new TailFixture();
                Rig rig = new Rig(f)) {
            String k = ChangeKindsIT.id(1);
            String other = ChangeKindsIT.id(2);
            f.insert(k, "first", null, 1);
            f.insert(other, "other", null, 2);
            rig.stall.failOnRelease();
            Marks marks = new Marks();
            ChangeHandler handler = rig.handler(2);
            List<ChangeEvent<SourceRecord, SourceRecord>> full = List.of(rig.change(k, 100), rig.change(other, 101));
            handler.handleBatch(full, marks);
            rig.stall.awaitHeld();
            f.sql("UPDATE " + f.table + " SET kind = 'second' WHERE id = '" + k + "'");

            List<ChangeEvent<SourceRecord, SourceRecord>> next = List.of(rig.change(k, 110));
            Thread later = rig.run(() -> handler.handleBatch(next, marks));
            awaitBlockedOn(later, blocker -> blocker instanceof FutureTask);
            rig.stall.release(); // the earlier batch's write fails now
            later.join(BOUND.toMillis());
            assertThat(rig.failures).isEmpty();
            assertThat(rig.stats.applyRetries())
                    .as("the failed batch was sent again")
                    .isEqualTo(1);
            assertThat(marks.marked).containsExactly(full.get(0), full.get(1), next.get(0));
            assertThat(f.item(other))
                    .as("a key only the failed write carried is in DynamoDB")
                    .isNotEmpty();
            assertThat(f.item(k).get("kind").s()).isEqualTo("second");
        }
    }

    /** Waits until {@code t} parks on a blocker {@code on} accepts, or ends (which the caller's assertions catch). */
    private static void awaitBlockedOn(Thread t, Predicate<Object> on) {
        await().atMost(BOUND)
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(1))
                .until(() -> !t.isAlive() || on.test(LockSupport.getBlocker(t)));
    }

    /** Holds the first BatchWriteItem before it is sent until released: a write still landing (or then failing). */
    static final class StallFirstWrite implements ExecutionInterceptor {
        private final AtomicBoolean armed = new AtomicBoolean(true);
        private volatile boolean fail;
        private final CountDownLatch held = new CountDownLatch(1);
        private final CountDownLatch released = new CountDownLatch(1);

        void awaitHeld() throws InterruptedException {
            assertThat(held.await(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
        }

        void release() {
            released.countDown();
        }

        /** The held write fails once released, as when DynamoDB refuses the call (a permission taken away, say). */
        void failOnRelease() {
            fail = true;
        }

        @Override
        public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
            if (!(context.request() instanceof BatchWriteItemRequest) || !armed.compareAndSet(true, false)) return;
            held.countDown();
            try {
                released.await(BOUND.toSeconds(), TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (fail) {
                throw DynamoDbException.builder()
                        .statusCode(400)
                        .awsErrorDetails(AwsErrorDetails.builder()
                                .errorCode("AccessDeniedException")
                                .errorMessage("injected")
                                .build())
                        .build();
            }
        }
    }

    /** What Debezium's committer was told, in order. */
    static final class Marks implements DebeziumEngine.RecordCommitter<ChangeEvent<SourceRecord, SourceRecord>> {
        final List<ChangeEvent<SourceRecord, SourceRecord>> marked = new CopyOnWriteArrayList<>();

        @Override
        public void markProcessed(ChangeEvent<SourceRecord, SourceRecord> record) {
            marked.add(record);
        }

        @Override
        public void markBatchFinished() {}

        @Override
        public void markProcessed(ChangeEvent<SourceRecord, SourceRecord> record, DebeziumEngine.Offsets offsets) {
            throw new AssertionError("the tail marks events with the offsets Debezium gave them");
        }

        @Override
        public DebeziumEngine.Offsets buildOffsets() {
            throw new AssertionError("the tail builds no offsets of its own");
        }
    }

    record Change(SourceRecord value) implements ChangeEvent<SourceRecord, SourceRecord> {
        @Override
        public SourceRecord key() {
            return value;
        }

        @Override
        public String destination() {
            return value.topic();
        }

        @Override
        public Integer partition() {
            return null;
        }
    }

    /** The tail's applier as ForwardStream wires it, writing through a client that can hold a write in flight. */
    private static final class Rig implements AutoCloseable {
        private static final String TOPIC = "table";
        private static final Schema KEY =
                SchemaBuilder.struct().field("id", Schema.STRING_SCHEMA).build();

        final StallFirstWrite stall = new StallFirstWrite();
        final List<Throwable> failures = new CopyOnWriteArrayList<>();
        final TailStats stats = new TailStats();
        final DynamoDbClient client;
        final TailLease lease;
        final TailHold tailHold;
        final ForwardHold hold;
        final KeyLog keyLog;
        final ChangeApplier applier;
        TailScopes scopes;
        final ChangedSlots changed;
        final BypassedWrites bypassed;
        final SourceTable table;

        Rig(TailFixture f) throws Exception {
            MigrationConfig config = f.config();
            table = f.sourceTable();
            client = DynamoClients.create(config.target(), f.services.dynamo.endpoint(), 16, List.of(stall));
            TailKeys keys = config.redis().keyspace().tail();
            lease = new TailLease(f.redis, keys, "overlap", Duration.ofMinutes(1));
            assertThat(lease.tryAcquire()).isTrue();
            RunKeys run = config.redis().keyspace().run();
            SourceSession session = new SourceSession(config.source());
            hold = new ForwardHold(f.redis, config.redis().keyspace().handoff());
            keyLog = new KeyLog(f.redis, config.redis().keyspace().handoff());
            bypassed = new BypassedWrites(f.redis, config.redis().keyspace().handoff());
            scopes = new TailScopes(
                    config.cutover().scope(), config.redis().keyspace().handoff(), PartMap.WHOLE, table.key());
            tailHold = new TailHold(
                    scopes, f.redis, session, new PostgresFence(config.cutover().pgFence()), stats::appliedLsn);
            changed = new ChangedSlots(f.redis, keys, table.keyspace());
            applier = new ChangeApplier(
                    session,
                    new ItemWriter(
                            new PageReader(table),
                            table.codec(config.target()),
                            new BatchWriter(client, config.target().table(), 25, Retrier.standard(), WritePacer.NONE)),
                    new TouchedKeys(f.redis, keys, new CopyProgress(f.redis, run), table.keyspace(), run.status()),
                    lease,
                    4,
                    () -> {},
                    tailHold,
                    scopes,
                    f.redis,
                    new RefusedRows(f.redis, config.redis().keyspace()),
                    stats.stages);
        }

        ChangeHandler handler(int fullBatch) {
            return new ChangeHandler(applier, TOPIC, table.key(), stats, lease, changed, List.of(bypassed), fullBatch);
        }

        /** No hold, in the table's one scope. */
        Holds none() {
            return new Holds(scopes, List.of(ForwardHold.State.NONE));
        }

        /** A change of {@code id}'s row at {@code lsn}, as Debezium delivers it (only the key is used). */
        ChangeEvent<SourceRecord, SourceRecord> change(String id, long lsn) {
            return new Change(
                    new SourceRecord(Map.of(), offset(lsn), TOPIC, KEY, new Struct(KEY).put("id", id), null, null));
        }

        /** A heartbeat message at {@code lsn}: no table, no key. */
        ChangeEvent<SourceRecord, SourceRecord> beat(long lsn) {
            return new Change(new SourceRecord(Map.of(), offset(lsn), "heartbeat", null, null, null, null));
        }

        private static Map<String, Object> offset(long lsn) {
            return Map.of("lsn", lsn, "ts_usec", System.currentTimeMillis() * 1_000);
        }

        Thread run(Step step) {
            Thread t = new Thread(
                    () -> {
                        try {
                            step.run();
                        } catch (Throwable e) {
                            failures.add(e);
                        }
                    },
                    "later-batch");
            t.start();
            return t;
        }

        @Override
        public void close() {
            stall.release();
            applier.close();
            tailHold.close();
            client.close();
        }
    }

    interface Step {
        void run() throws Exception;
    }
}
