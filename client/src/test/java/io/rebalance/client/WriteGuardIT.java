package io.rebalance.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.rebalance.protocol.fence.DynamoFence;
import io.rebalance.protocol.fence.FenceTrigger;
import io.rebalance.protocol.fence.FenceWriter;
import io.rebalance.protocol.fence.FencedException;
import io.rebalance.protocol.fence.PostgresFence;
import io.rebalance.protocol.handoff.TargetWriteLog;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.keyspace.ScopeKeys;
import io.rebalance.protocol.lock.LockLease;
import io.rebalance.protocol.lock.LockWaitTimeoutException;
import io.rebalance.protocol.lock.SharedExclusiveLock;
import io.rebalance.protocol.route.RouteStatus;
import io.rebalance.protocol.route.RoutingTable;
import io.rebalance.protocol.route.StoreOfRecord;
import io.rebalance.protocol.route.Target;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.Put;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;

/**
 * The application side against real services: the guard's waits and bounds, the route it reads, and the fences that
 * refuse a writer whose lease lapsed while the scope moved: a stalled writer whose shared lease expired is refused
 * after the flip.
 */
class WriteGuardIT {
    private static final String SCOPE = "room_events";
    private static final Duration LONG = Duration.ofSeconds(30);

    private final SharedServices services = SharedServices.get();
    private final UnifiedJedis redis = services.redis();
    private final DynamoDbClient dynamo = services.dynamoClient();
    private final String prefix = SharedServices.unique("guard") + ":";
    private final String rows = SharedServices.unique("events");
    private final String items = SharedServices.unique("events");
    private final GuardSettings settings = new GuardSettings(
            prefix,
            Duration.ofSeconds(5),
            Duration.ofSeconds(5),
            "public." + SharedServices.unique("fence"),
            SharedServices.unique("fence"));
    private final SharedExclusiveLock lock = new SharedExclusiveLock(redis, new Keyspace(prefix).scope(SCOPE));
    private final RoutingTable routes = new RoutingTable(redis, new Keyspace(prefix));
    private final PostgresFence pgFence = new PostgresFence(settings.postgresFenceTable());
    private final DynamoFence dynamoFence = new DynamoFence(dynamo, settings.dynamoFenceTable());
    private Connection admin;

    @BeforeEach
    void prepare() throws Exception {
        admin = services.postgres();
        try (Statement s = admin.createStatement()) {
            s.execute("CREATE TABLE " + rows + " (id text PRIMARY KEY, body text)");
        }
        pgFence.install(admin, SCOPE);
        dynamoFence.install(SCOPE);
        dynamo.createTable(b -> b.tableName(items)
                .billingMode(BillingMode.PAY_PER_REQUEST)
                .attributeDefinitions(AttributeDefinition.builder()
                        .attributeName("id")
                        .attributeType(ScalarAttributeType.S)
                        .build())
                .keySchema(KeySchemaElement.builder()
                        .attributeName("id")
                        .keyType(KeyType.HASH)
                        .build()));
        routes.create(SCOPE, RouteStatus.SOURCE, 1);
    }

    @AfterEach
    void close() throws Exception {
        admin.close();
        redis.close();
        dynamo.close();
    }

    @Test
    void writesGoWhereTheRouteSaysAndReadsFollowIt() throws Exception {
        try (WriteGuard guard = new WriteGuard(redis, dynamo, settings)) {
            guard.run(SCOPE, permit -> write(permit, "a", "1"));
            assertThat(rowBody("a")).isEqualTo("1");
            assertThat(item("a")).isNull();
            assertThat(new Router(redis, prefix).readTarget(SCOPE)).isEqualTo(Target.POSTGRES);

            flip(RouteStatus.SOURCE, RouteStatus.TARGET);

            guard.run(SCOPE, permit -> write(permit, "b", "2"));
            assertThat(item("b")).isEqualTo("2");
            assertThat(rowBody("b")).isNull();
            assertThat(new Router(redis, prefix).readTarget(SCOPE)).isEqualTo(Target.DYNAMODB);
            assertThat(lock.holders().shared()).as("every lease given back").isEmpty();
        }
    }

    @Test
    void whileTheCutoverHoldsTheScopeAWriteWaitsThenFailsClearly() throws Exception {
        GuardSettings shortWait = settings.withMaxWait(Duration.ofMillis(300));
        try (WriteGuard guard = new WriteGuard(redis, dynamo, shortWait)) {
            LockLease cutover = ((SharedExclusiveLock.Granted) lock.tryExclusive("cutover-1", LONG)).lease();
            assertThatThrownBy(() -> guard.run(SCOPE, permit -> write(permit, "x", "1")))
                    .isInstanceOf(LockWaitTimeoutException.class)
                    .hasMessageContaining("'room_events' are blocked")
                    .hasMessageContaining("cutover-1")
                    .hasMessageContaining("nothing was written");
            assertThat(rowBody("x")).isNull();
            lock.release(cutover);
        }
        try (WriteGuard guard = new WriteGuard(redis, dynamo, settings)) {
            LockLease cutover = ((SharedExclusiveLock.Granted) lock.tryExclusive("cutover-2", LONG)).lease();
            CompletableFuture<Void> blocked = CompletableFuture.runAsync(() -> {
                try {
                    guard.run(SCOPE, permit -> write(permit, "y", "1"));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThat(blocked).isNotDone();
            assertThat(rowBody("y")).isNull();
            lock.release(cutover);
            blocked.get(10, TimeUnit.SECONDS);
            assertThat(rowBody("y")).isEqualTo("1");
        }
    }

    @Test
    void aStalledPostgresWriterWhoseLeaseLapsedIsRefusedAfterTheFlip() throws Exception {
        try (WriteGuard paused = new WriteGuard(redis, dynamo, settings.withLeaseTtl(Duration.ofMillis(300)), false)) {
            Stalled stalled = stallInWrite(paused, Target.POSTGRES, "late");
            flip(RouteStatus.SOURCE, RouteStatus.TARGET); // granted only once the stalled writer's lease lapsed
            stalled.resume().countDown();

            assertThatThrownBy(() -> stalled.outcome().get(10, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(FencedException.class)
                    .hasMessageContaining("Postgres refused a write to 'room_events'");
            assertThat(rowBody("late")).as("nothing of the stale write landed").isNull();
        }
    }

    @Test
    void aStalledWriterWhoseStatementMeetsTheTablesTriggerGetsTheSameFencedException() throws Exception {
        pgFence.trigger().install(admin, rows, SCOPE); // as cutover --prepare does: Postgres refuses at the INSERT
        try (WriteGuard paused = new WriteGuard(redis, dynamo, settings.withLeaseTtl(Duration.ofMillis(300)), false)) {
            Stalled stalled = stallInWrite(paused, Target.POSTGRES, "late");
            flip(RouteStatus.SOURCE, RouteStatus.TARGET);
            stalled.resume().countDown();

            assertThatThrownBy(() -> stalled.outcome().get(10, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(FencedException.class)
                    .hasMessageContaining("Postgres refused a write to 'room_events'")
                    .hasMessageContaining("at its statement")
                    .hasMessageContaining("admits no application");
            assertThat(rowBody("late")).as("nothing of the stale write landed").isNull();
        }
    }

    @Test
    void theTriggerIsEnabledOnEveryPartitionOnlyWhileTheFenceIsClosedOneAttachedSinceIncluded() throws Exception {
        String parted = SharedServices.unique("parted");
        try (Statement s = admin.createStatement()) {
            s.execute("CREATE TABLE " + parted + " (id text PRIMARY KEY, body text) PARTITION BY RANGE (id)");
            s.execute("CREATE TABLE " + parted + "_a PARTITION OF " + parted + " FOR VALUES FROM ('a') TO ('m')");
            FenceTrigger trigger = pgFence.trigger();
            trigger.install(admin, parted, SCOPE);
            assertThat(trigger.gaps(admin, parted, SCOPE)).isEmpty();
            assertThat(trigger.enforced(admin, parted, SCOPE))
                    .as("disabled while the fence is open")
                    .isFalse();
            s.execute("INSERT INTO " + parted + " VALUES ('b', 'open')"); // costs nothing: the trigger is disabled
            s.execute("CREATE TABLE " + parted + "_n PARTITION OF " + parted + " FOR VALUES FROM ('m') TO ('z')");

            pgFence.set(admin, SCOPE, FenceWriter.REVERSE, 1, LONG); // enables it, on the new partition too
            assertThat(trigger.enforced(admin, parted, SCOPE)).isTrue();
            for (String target : List.of(parted, parted + "_a", parted + "_n")) {
                assertThatThrownBy(() -> s.execute("INSERT INTO " + target + " VALUES ('c', 'late'), ('x', 'late')"))
                        .as("a write naming " + target)
                        .isInstanceOf(SQLException.class)
                        .satisfies(e ->
                                assertThat(((SQLException) e).getSQLState()).isEqualTo(FenceTrigger.REFUSED));
            }
            s.execute("ALTER TABLE " + parted + "_n DISABLE TRIGGER " + trigger.name());
            assertThat(trigger.gaps(admin, parted, SCOPE))
                    .as("a trigger someone disabled while the fence is closed")
                    .containsExactly(parted + "_n's trigger " + trigger.name() + " is not enabled ALWAYS");

            pgFence.set(admin, SCOPE, FenceWriter.APP, 2, LONG); // disables it everywhere
            assertThat(trigger.enforced(admin, parted, SCOPE)).isFalse();
            s.execute("INSERT INTO " + parted + "_n VALUES ('x', 'open again')");
            trigger.remove(admin, parted);
            s.execute("DROP TABLE " + parted);
        }
    }

    @Test
    void aStalledDynamoWriterWhoseLeaseLapsedIsRefusedAfterTheFlipBack() throws Exception {
        flip(RouteStatus.SOURCE, RouteStatus.TARGET);
        try (WriteGuard paused = new WriteGuard(redis, dynamo, settings.withLeaseTtl(Duration.ofMillis(300)), false)) {
            Stalled stalled = stallInWrite(paused, Target.DYNAMODB, "late");
            flip(RouteStatus.TARGET, RouteStatus.SOURCE);
            stalled.resume().countDown();

            assertThatThrownBy(() -> stalled.outcome().get(10, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(FencedException.class)
                    .hasMessageContaining("DynamoDB refused a write to 'room_events'");
            assertThat(item("late")).isNull();
        }
    }

    private record Stalled(CompletableFuture<Void> outcome, CountDownLatch resume) {}

    /** A write that has its permit and then pauses (GC, a stalled socket) until told to go on; returns once paused. */
    private Stalled stallInWrite(WriteGuard paused, Target expected, String id) throws InterruptedException {
        CountDownLatch inWrite = new CountDownLatch(1);
        CountDownLatch resume = new CountDownLatch(1);
        CompletableFuture<Void> outcome = CompletableFuture.runAsync(() -> {
            try {
                paused.run(SCOPE, permit -> {
                    assertThat(permit.target()).isEqualTo(expected);
                    inWrite.countDown();
                    resume.await();
                    write(permit, id, "stale");
                });
            } catch (Exception e) {
                throw new java.util.concurrent.CompletionException(e);
            }
        });
        inWrite.await();
        return new Stalled(outcome, resume);
    }

    /**
     * While a guarded transaction that read the fence is open (a long one, say), installing the fence again and
     * keeping a finished copy's record on it go through: neither takes the table's ACCESS EXCLUSIVE lock, which would
     * queue behind that transaction and every new guarded write behind it. Each runs under a 2 s lock timeout, which
     * an ALTER TABLE here would hit.
     */
    @Test
    void reinstallingAndKeepingTheCopyRecordNeverLockTheTableAgainstWriters() throws Exception {
        try (Connection app = services.postgres();
                Connection admin2 = services.postgres();
                Statement st = admin2.createStatement()) {
            app.setAutoCommit(false);
            pgFence.check(app, SCOPE, 7); // the open transaction holds the table's share lock from here
            st.execute("SET lock_timeout = '2s'");
            pgFence.install(admin2, SCOPE);
            assertThat(pgFence.recordCopy(admin2, SCOPE, "{\"rows\":3}")).isTrue();
            assertThat(pgFence.copyRecord(admin2, SCOPE)).contains("{\"rows\":3}");
            assertThat(pgFence.recordCopy(admin2, SCOPE, null)).isTrue();
            assertThat(pgFence.copyRecord(admin2, SCOPE)).isEmpty();
            app.rollback();
        }
    }

    @Test
    void settingThePostgresFenceWaitsForWritesThatCheckedIt() throws Exception {
        try (Connection app = services.postgres()) {
            app.setAutoCommit(false);
            pgFence.check(app, SCOPE, 7);
            insert(app, "in-flight", "1");
            CompletableFuture<Void> closing = CompletableFuture.runAsync(() -> {
                try (Connection c = services.postgres()) {
                    pgFence.set(c, SCOPE, FenceWriter.REVERSE, 8, LONG);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            // the cutover's update is queued behind the write's share lock, not racing it
            await().atMost(10, TimeUnit.SECONDS).until(() -> waitingOnLock(settings.postgresFenceTable()));
            assertThat(closing).isNotDone();
            app.commit();
            closing.get(10, TimeUnit.SECONDS);

            assertThat(rowBody("in-flight")).isEqualTo("1");
            assertThatThrownBy(() -> pgFence.check(app, SCOPE, 7)).isInstanceOf(FencedException.class);
            app.rollback();
        }
    }

    @Test
    void underTargetEveryDynamoWriteLogsItsKeysBeforeItIsSent() throws Exception {
        ScopeKeys keys = new Keyspace(prefix).scope(SCOPE);
        TargetWriteLog log = new TargetWriteLog(redis, keys);
        log.begin(2, items, "id"); // what the flip to TARGET at epoch 2 does first
        flip(RouteStatus.SOURCE, RouteStatus.TARGET);
        assertThat(routes.get(SCOPE).orElseThrow().epoch()).isEqualTo(2);
        try (WriteGuard guard = new WriteGuard(redis, dynamo, settings)) {
            guard.run(SCOPE, permit -> write(permit, "k1", "1"));
            guard.run(SCOPE, permit -> write(permit, "k2", "2"));
            assertThat(log.read(2).keys()).hasValue(java.util.Set.of("k1", "k2"));

            log.drop(); // as when Redis loses it: the next write cannot log, and says so
            guard.run(SCOPE, permit -> write(permit, "k3", "3"));
            assertThat(item("k3")).isEqualTo("3");
            TargetWriteLog.Read lost = log.read(2);
            assertThat(lost.complete()).isFalse();
            assertThat(lost.incomplete()).contains("a write under epoch 2 found no log (Redis lost it)");
        }
        TargetWriteLog small = new TargetWriteLog(redis, keys, 2);
        small.begin(3, items, "id");
        small.add(3, List.of("a", "b"));
        assertThat(small.read(3).complete()).isTrue();
        small.add(3, List.of("c"));
        assertThat(small.read(3).incomplete()).isEqualTo("it passed its cap of 2 keys");
        assertThat(small.read(4).incomplete()).startsWith("the log is of epoch 3, not the route's 4");
    }

    @Test
    void aWriteThatNamesTheTableByItsArnIsLoggedByTheTableItReaches() throws Exception {
        TargetWriteLog log = new TargetWriteLog(redis, new Keyspace(prefix).scope(SCOPE));
        log.begin(2, items, "id");
        flip(RouteStatus.SOURCE, RouteStatus.TARGET);
        String arn = "arn:aws:dynamodb:us-east-1:000000000000:table/" + items;
        try (WriteGuard guard = new WriteGuard(redis, dynamo, settings)) {
            try {
                guard.run(
                        SCOPE,
                        permit -> permit.writeDynamo(
                                dynamo,
                                TransactWriteItem.builder()
                                        .put(Put.builder()
                                                .tableName(arn)
                                                .item(Map.of(
                                                        "id",
                                                        AttributeValue.fromS("by-arn"),
                                                        "body",
                                                        AttributeValue.fromS("1")))
                                                .build())
                                        .build()));
            } catch (software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException local) {
                // DynamoDB Local takes no ARN for a table's name (AWS does): the key was logged before it was sent
            }
        }
        assertThat(log.read(2).keys()).hasValue(java.util.Set.of("by-arn")); // a rollback compares it
        assertThat(TargetWriteLog.tableName(arn + "/index/by_room")).isEqualTo(arn + "/index/by_room");
        assertThat(TargetWriteLog.tableName(items)).isEqualTo(items);
    }

    /**
     * Postgres is the store of record until a cutover opens DynamoDB to applications, whichever record says so first:
     * the DynamoDB fence opened in the window, Redis' route, or a fence's copy of the route when Redis lost it.
     */
    @Test
    void theStoreOfRecordIsDynamoDbOnceAnyRecordSaysTheRouteLeftSource() throws Exception {
        assertThat(storeOfRecord().store()).isEqualTo(Target.POSTGRES);
        dynamoFence.set(SCOPE, FenceWriter.APP, 1); // a cutover in its window, after OPEN_TARGET, before the flip
        StoreOfRecord window = storeOfRecord();
        assertThat(window.store()).isEqualTo(Target.DYNAMODB);
        assertThat(window.describe()).contains("the DynamoDB fence admits applications");
        dynamoFence.set(SCOPE, FenceWriter.NONE, 1);
        flip(RouteStatus.SOURCE, RouteStatus.TARGET); // Redis says TARGET at epoch 2
        assertThat(storeOfRecord().route()).isEqualTo(RouteStatus.TARGET);
        assertThat(storeOfRecord().store()).isEqualTo(Target.DYNAMODB);
        flip(RouteStatus.TARGET, RouteStatus.SOURCE); // rolled back: epoch 3
        assertThat(storeOfRecord().store()).isEqualTo(Target.POSTGRES);
        pgFence.record(admin, SCOPE, RouteStatus.TARGET, 4, Long.MAX_VALUE, LONG); // recorded, then Redis lost all
        redis.del(new Keyspace(prefix).scope(SCOPE).route());
        StoreOfRecord lost = storeOfRecord();
        assertThat(lost.store()).isEqualTo(Target.DYNAMODB);
        assertThat(lost.epoch()).isEqualTo(4);
        assertThatThrownBy(() -> lost.requirePostgres("copy", "Roll back first."))
                .hasMessageContaining("copy refused, nothing written: DynamoDB is the store of record: the route is"
                        + " TARGET at epoch 4")
                .hasMessageContaining("Roll back first.");
    }

    /**
     * A cutover opens the DynamoDB fence and records its flip there in one conditional write: a token below the
     * fence's or an epoch below the recorded one changes nothing, so a command paused past its lease cannot reopen the
     * fence or take a newer flip back.
     */
    @Test
    void openingTheDynamoFenceWithItsRecordNeverLowersATokenOrAnEpoch() throws Exception {
        var opened = dynamoFence.setAndRecord(SCOPE, FenceWriter.APP, 5, RouteStatus.TARGET, 3);
        assertThat(opened.writer()).isEqualTo(FenceWriter.APP);
        assertThat(opened.minToken()).isEqualTo(5);
        assertThat(opened.route()).isEqualTo(RouteStatus.TARGET);
        assertThat(opened.epoch()).isEqualTo(3);
        dynamoFence.set(SCOPE, FenceWriter.NONE, 5);
        assertThatThrownBy(() -> dynamoFence.setAndRecord(SCOPE, FenceWriter.APP, 4, RouteStatus.TARGET, 4))
                .isInstanceOf(io.rebalance.protocol.fence.TokenBehindException.class);
        assertThatThrownBy(() -> dynamoFence.setAndRecord(SCOPE, FenceWriter.APP, 6, RouteStatus.SOURCE, 2))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("records epoch 3, newer than this flip's 2");
        var now = dynamoFence.state(SCOPE);
        assertThat(now.writer()).isEqualTo(FenceWriter.NONE);
        assertThat(now.minToken()).isEqualTo(5);
        assertThat(now.route()).isEqualTo(RouteStatus.TARGET);
        assertThat(now.epoch()).isEqualTo(3);
    }

    /**
     * A command records its flip on the Postgres fence only while no newer command set the fence: one whose lease
     * another took (Redis restarted empty, a recovery put the stores back with a newer token) records nothing.
     */
    @Test
    void aFlipRecordedWithATokenBehindThePostgresFencesChangesNothing() throws Exception {
        pgFence.set(admin, SCOPE, FenceWriter.APP, 7, LONG);
        assertThatThrownBy(() -> pgFence.record(admin, SCOPE, RouteStatus.TARGET, 5, 6, LONG))
                .isInstanceOf(io.rebalance.protocol.fence.TokenBehindException.class);
        var now = pgFence.state(admin, SCOPE);
        assertThat(now.route()).isEqualTo(RouteStatus.SOURCE);
        assertThat(now.epoch()).isEqualTo(1);
        pgFence.record(admin, SCOPE, RouteStatus.TARGET, 5, 7, LONG);
        assertThat(pgFence.state(admin, SCOPE).route()).isEqualTo(RouteStatus.TARGET);
        pgFence.record(admin, SCOPE, RouteStatus.SOURCE, 4, 7, LONG); // an older epoch: kept as it is, no failure
        assertThat(pgFence.state(admin, SCOPE).epoch()).isEqualTo(5);
    }

    private StoreOfRecord storeOfRecord() throws Exception {
        return StoreOfRecord.read(admin, pgFence, dynamoFence, routes.get(SCOPE), SCOPE);
    }

    @Test
    void aCommitQueuedBehindTheClosingIsRefusedAndRolledBack() throws Exception {
        try (Connection cutover = services.postgres();
                Connection app = services.postgres()) {
            app.setAutoCommit(false);
            pgFence.commitIfAdmitted(app, SCOPE, 7); // nothing written: commits
            insert(app, "before", "1");
            pgFence.commitIfAdmitted(app, SCOPE, 7);
            assertThat(rowBody("before")).isEqualTo("1");

            insert(app, "queued", "1");
            closeHeldOpen(cutover);
            CompletableFuture<Void> commit = CompletableFuture.runAsync(() -> {
                try {
                    pgFence.commitIfAdmitted(app, SCOPE, 7);
                } catch (Exception e) {
                    throw new java.util.concurrent.CompletionException(e);
                }
            });
            await().atMost(10, TimeUnit.SECONDS).until(this::checkWaitsOnTheLock);
            cutover.commit();
            assertThatThrownBy(() -> commit.get(10, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(FencedException.class)
                    .hasMessageContaining("writer=reverse");
            assertThat(rowBody("queued"))
                    .as("the refused transaction was rolled back")
                    .isNull();
            insert(app, "after", "1"); // the connection goes on
            assertThatThrownBy(() -> pgFence.commitIfAdmitted(app, SCOPE, 7)).isInstanceOf(FencedException.class);
            assertThat(rowBody("after")).isNull();
        }
    }

    @Test
    void aCheckQueuedBehindTheClosingReadsTheFenceAsClosed() throws Exception {
        try (Connection cutover = services.postgres();
                Connection app = services.postgres()) {
            closeHeldOpen(cutover);
            app.setAutoCommit(false);
            CompletableFuture<Void> check = CompletableFuture.runAsync(() -> {
                try {
                    pgFence.check(app, SCOPE, 7);
                } catch (Exception e) {
                    throw new java.util.concurrent.CompletionException(e);
                }
            });
            await().atMost(10, TimeUnit.SECONDS).until(this::checkWaitsOnTheLock);
            cutover.commit();
            // the read runs after the lock is granted, so it sees the committed closing, not the row before it
            assertThatThrownBy(() -> check.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(FencedException.class);
            app.rollback();
        }
    }

    /** What {@link PostgresFence#set} does to close the fence, with its transaction held open. */
    private void closeHeldOpen(Connection cutover) throws Exception {
        String table = settings.postgresFenceTable();
        cutover.setAutoCommit(false);
        try (Statement s = cutover.createStatement()) {
            s.execute(
                    "SELECT pg_advisory_xact_lock(hashtextextended('rebalance.fence:" + table + ":" + SCOPE + "', 0))");
            s.execute("UPDATE " + table + " SET writer = 'reverse', min_token = 8 WHERE scope = '" + SCOPE + "'");
        }
    }

    private boolean checkWaitsOnTheLock() throws Exception {
        try (Statement s = admin.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                        + " AND wait_event = 'advisory' AND query LIKE '%pg_advisory_xact_lock_shared(%'")) {
            rs.next();
            return rs.getInt(1) > 0;
        }
    }

    @Test
    void concurrentChecksLockNoRowSoTheyMakeNoMultixact() throws Exception {
        try (Connection a = services.postgres();
                Connection b = services.postgres()) {
            a.setAutoCommit(false);
            b.setAutoCommit(false);
            pgFence.check(a, SCOPE, 7);
            pgFence.check(b, SCOPE, 7);
            // two transactions share-locking one row would leave a multixact in its xmax; the checks leave none
            try (Statement s = admin.createStatement();
                    ResultSet rs = s.executeQuery("SELECT xmax::text FROM " + settings.postgresFenceTable()
                            + " WHERE scope = '" + SCOPE + "'")) {
                rs.next();
                assertThat(rs.getString(1)).isEqualTo("0");
            }
            a.rollback();
            b.rollback();
        }
    }

    @Test
    void aRoleThatMayOnlyReadTheFenceChecksItButCannotReopenIt() throws Exception {
        String role = SharedServices.unique("app_role");
        String table = settings.postgresFenceTable();
        try (Statement s = admin.createStatement()) {
            s.execute("CREATE ROLE " + role + " LOGIN");
            s.execute("GRANT SELECT ON " + table + " TO " + role);
            s.execute("GRANT INSERT ON " + rows + " TO " + role);
        }
        try (Connection app = services.postgres()) {
            try (Statement s = app.createStatement()) {
                s.execute("SET ROLE " + role);
            }
            app.setAutoCommit(false);
            pgFence.check(app, SCOPE, 7); // FOR SHARE would need UPDATE, and so the right to reopen the fence
            insert(app, "by-role", "1");
            app.commit();
            assertThat(rowBody("by-role")).isEqualTo("1");
            assertThatThrownBy(() -> {
                        try (Statement s = app.createStatement()) {
                            s.executeUpdate("UPDATE " + table + " SET writer = 'app'");
                        }
                    })
                    .hasMessageContaining("permission denied");
            app.rollback();
            assertThat(pgFence.roles().unfitRoles(admin, List.of(role))).isEmpty();

            try (Statement s = admin.createStatement()) {
                s.execute("GRANT UPDATE ON " + table + " TO " + role);
            }
            assertThat(pgFence.roles().unfitRoles(admin, List.of(role, "postgres", "no_such_role_x")))
                    .hasEntrySatisfying(
                            role, why -> assertThat(why).contains("REVOKE INSERT, UPDATE, DELETE, TRUNCATE"))
                    .hasEntrySatisfying("postgres", why -> assertThat(why).contains("superuser"))
                    .containsEntry("no_such_role_x", "no such role");
        } finally {
            try (Statement s = admin.createStatement()) {
                s.execute("DROP OWNED BY " + role);
                s.execute("DROP ROLE " + role);
            }
        }
    }

    @Test
    void aCheckOutsideReadCommittedIsRefusedBecauseItWouldReadAStaleFence() throws Exception {
        try (Connection app = services.postgres()) {
            app.setAutoCommit(false);
            app.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            assertThatThrownBy(() -> pgFence.check(app, SCOPE, 7))
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("READ COMMITTED, not repeatable read");
            app.rollback();
        }
    }

    @Test
    void onlyTheHolderOfTheExclusiveLeaseChangesTheRoute() throws Exception {
        LockLease lapsed =
                ((SharedExclusiveLock.Granted) lock.tryExclusive("paused-cutover", Duration.ofMillis(200))).lease();
        LockLease other = await().atMost(10, TimeUnit.SECONDS)
                                .pollInterval(Duration.ofMillis(20))
                                .until(
                                        () -> lock.tryExclusive("next-cutover", LONG),
                                        SharedExclusiveLock.Granted.class::isInstance)
                        instanceof SharedExclusiveLock.Granted g
                ? g.lease()
                : null;
        assertThat(routes.set(lapsed, RouteStatus.SOURCE, RouteStatus.TARGET, 0))
                .isEqualTo(new RoutingTable.LeaseGone("next-cutover"));
        assertThat(routes.set(other, RouteStatus.TARGET, RouteStatus.SOURCE, 0))
                .isEqualTo(new RoutingTable.StatusChanged("SOURCE"));
        assertThat(routes.get(SCOPE).orElseThrow().status()).isEqualTo(RouteStatus.SOURCE);
        var changed = (RoutingTable.Changed) routes.set(other, RouteStatus.SOURCE, RouteStatus.TARGET, 0);
        assertThat(changed.route().read()).isEqualTo(Target.DYNAMODB);
        assertThat(changed.route().write()).isEqualTo(Target.DYNAMODB);
        assertThat(changed.route().token()).isEqualTo(other.token());
        assertThat(changed.route().epoch()).isEqualTo(2);
        lock.release(other);
    }

    /** What the cutover and the rollback do to the stores and the route, with the exclusive lease held. */
    private void flip(RouteStatus from, RouteStatus to) throws Exception {
        LockLease ex = await().atMost(10, TimeUnit.SECONDS)
                                .pollInterval(Duration.ofMillis(10))
                                .until(
                                        () -> lock.tryExclusive("cutover", LONG),
                                        SharedExclusiveLock.Granted.class::isInstance)
                        instanceof SharedExclusiveLock.Granted g
                ? g.lease()
                : null;
        if (to.write() == Target.DYNAMODB) {
            pgFence.set(admin, SCOPE, FenceWriter.REVERSE, ex.token(), LONG);
            dynamoFence.set(SCOPE, FenceWriter.APP, ex.token());
        } else {
            dynamoFence.set(SCOPE, FenceWriter.NONE, ex.token());
            pgFence.set(admin, SCOPE, FenceWriter.APP, ex.token(), LONG);
        }
        assertThat(routes.set(ex, from, to, 0)).isInstanceOf(RoutingTable.Changed.class);
        lock.release(ex);
    }

    private void write(WritePermit permit, String id, String body) throws Exception {
        if (permit.target() == Target.POSTGRES) {
            try (Connection c = services.postgres()) {
                c.setAutoCommit(false);
                insert(c, id, body);
                permit.commitPostgres(c);
            }
        } else {
            permit.writeDynamo(
                    dynamo,
                    TransactWriteItem.builder()
                            .put(Put.builder()
                                    .tableName(items)
                                    .item(Map.of("id", AttributeValue.fromS(id), "body", AttributeValue.fromS(body)))
                                    .build())
                            .build());
        }
    }

    private void insert(Connection c, String id, String body) throws Exception {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + rows + " VALUES (?, ?)")) {
            ps.setString(1, id);
            ps.setString(2, body);
            ps.executeUpdate();
        }
    }

    private String rowBody(String id) throws Exception {
        try (PreparedStatement ps = admin.prepareStatement("SELECT body FROM " + rows + " WHERE id = ?")) {
            ps.setString(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }

    private String item(String id) {
        var r = dynamo.getItem(b ->
                b.tableName(items).key(Map.of("id", AttributeValue.fromS(id))).consistentRead(true));
        return r.hasItem() && !r.item().isEmpty() ? r.item().get("body").s() : null;
    }

    /** Whether a session waits for the fence's lock (advisory: the cutover's exclusive request). */
    private boolean waitingOnLock(String table) throws Exception {
        try (Statement s = admin.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                        + " AND wait_event = 'advisory' AND query LIKE '%pg_advisory_xact_lock(%'")) {
            rs.next();
            return rs.getInt(1) > 0;
        }
    }
}
