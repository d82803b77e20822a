package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.config.ConfigLoader;
import io.rebalance.core.config.ConfigValidator;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.dynamo.TargetTable;
import io.rebalance.core.redis.RedisConnector;
import io.rebalance.core.retry.Retrier;
import io.rebalance.core.slot.KeyType;
import io.rebalance.local.DynamoDbLocalServer;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.mover.RunState;
import io.rebalance.mover.redis.RedisRunState;
import io.rebalance.protocol.route.Target;
import io.rebalance.sim.AppSimulator;
import io.rebalance.testkit.PrivateSentinel;
import io.rebalance.testkit.RoomEventsComparison;
import io.rebalance.testkit.SharedServices;
import io.rebalance.testkit.TestMigration;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The migration on a Sentinel-managed Redis ({@code redis.mode: sentinel}, the URL naming the sentinel): a primary
 * and its replica without an append-only file, as managed Redis runs, and the primary killed in the middle of a
 * copy. The sentinel promotes the replica, the copy's client follows it, and whatever the replica had not received
 * (a slot's progress, a lease) is copied again: the copy ends FINISHED, verification matches and every item equals
 * its row.
 */
class RedisSentinelIT {
    /** An application writing 100 times a second (90% updates): the suite shares 2 cores with it. */
    private static final AppSimulator.Load LOAD = new AppSimulator.Load(10, 100, 2, 50, 0.9, 0.01);

    private static final int ROWS = 12_000;

    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("sentinel");
    private final String prefix = SharedServices.unique("se") + ":";

    /**
     * The primary killed inside the rollback window, with an application writing through the guard: no append-only
     * file, but the replica acknowledges (the Redis check passes without {@code --allow-redis-without-aof}); the
     * sentinel promotes it, which had the route (every route change waits for a replica) but may lack the last keys
     * of the log of DynamoDB writes (its run id changed). The rollback starts that log again and compares every key
     * before blocking writes, and both stores end holding every acknowledged write exactly once.
     */
    @Test
    void aFailoverInTheRollbackWindowLosesNoAcknowledgedWrite() throws Exception {
        String cutTable = SharedServices.unique("sentinelcut");
        // its own DynamoDB Local: the stream the rollback reads makes the shared server's later streamed writes slow
        try (PrivateSentinel sentinel = PrivateSentinel.start("--appendonly", "no", "--save", "");
                DynamoDbLocalServer dynamo = SharedServices.ownDynamo()) {
            Map<String, String> settings = TailedTable.settings(services, cutTable, prefix);
            settings.put("redis.url", sentinel.url);
            settings.put("target.endpoint", dynamo.endpoint());
            settings.put("redis.mode", "sentinel");
            settings.put("redis.sentinelMaster", PrivateSentinel.MASTER);
            List<String> args = TailedTable.args(settings);
            try (TailedTable t = new TailedTable(services, cutTable, settings, 3_000, 23)) {
                assertThat(CliRun.of(args, "cutover", "--prepare").exitCode()).isZero();
                assertThat(CliRun.of(args, "copy", "--no-progress").exitCode()).isZero();
                assertThat(CliRun.of(args, "verify", "--all").exitCode()).isZero();
                Awaitility.await()
                        .atMost(Duration.ofSeconds(30))
                        .until(() -> CliRun.of(args, "cutover", "--dry-run").exitCode() == 0);
                try (AppSimulator app = new AppSimulator(t.config, t.source, t.redis, t.dynamo, t.guard())) {
                    app.start(LOAD, 29);
                    // an abort (exit 32: the tail did not catch up within the budget on a loaded machine) is safe and
                    // says to run it again, as a user would
                    CliRun cut = Awaitility.await()
                            .atMost(Duration.ofSeconds(120))
                            .until(
                                    () -> CliRun.of(args, "cutover", "--max-write-block", "15s"),
                                    r -> r.exitCode() != 32);
                    assertThat(cut.exitCode()).as(cut.out() + cut.err()).isZero();
                    app.awaitAcknowledged(Target.DYNAMODB, 300, Duration.ofSeconds(60));

                    HostAndPort before = sentinel.primary();
                    assertThat(sentinel.killPrimary()).isNotEqualTo(before);

                    app.awaitAcknowledged(
                            Target.DYNAMODB,
                            app.ledger().acknowledged(Target.DYNAMODB) + 100,
                            Duration.ofSeconds(60)); // writes go on through the new primary
                    // the new primary alone could lose the route: the rollback's Redis check refuses it until the
                    // old node is back, as its replica
                    CliRun alone = CliRun.of(args, "cutover", "--rollback");
                    assertThat(alone.exitCode()).isEqualTo(31);
                    assertThat(alone.err()).contains("has no replica (connected_slaves:0)");
                    sentinel.restartKilled();
                    long toPostgres = app.ledger().acknowledged(Target.POSTGRES);
                    CliRun back = Awaitility.await() // until the tail's reverse stream reports to the new primary
                            .atMost(Duration.ofSeconds(180))
                            .until(
                                    () -> CliRun.of(args, "cutover", "--rollback", "--max-write-block", "15s"),
                                    r -> r.exitCode() != 31 && r.exitCode() != 32);
                    assertThat(back.exitCode()).as(back.out() + back.err()).isZero();
                    assertThat(back.out())
                            .as("the promoted replica has another run id: the log may lack keys")
                            .contains("the log of written keys was incomplete (the Redis instance that holds it"
                                    + " restarted or failed over");
                    app.awaitAcknowledged(Target.POSTGRES, toPostgres + 200, Duration.ofSeconds(60));
                    app.pause();

                    Map<String, Long> postgres = app.postgresSeqs();
                    assertThat(app.ledger().check("postgres", postgres, 10)).isEmpty();
                    Awaitility.await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(
                                    app.dynamoAgainst(postgres))
                            .isEmpty());
                }
                try (Connection pg = services.postgres()) { // every column of every row, not only the seqs
                    assertThat(RoomEventsComparison.differences(pg, cutTable, t.dynamo, cutTable))
                            .isEmpty();
                }
            }
        }
    }

    @Test
    void aFailoverInTheMiddleOfACopyEndsWithAnExactCopy() throws Exception {
        try (Connection pg = services.postgres()) {
            RoomEventsGenerator.create(pg, table, ROWS, Instant.parse("2024-10-20T00:00:00Z"), 12, 21);
        }
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try (PrivateSentinel sentinel = PrivateSentinel.start("--appendonly", "no", "--save", "");
                DynamoDbClient dynamo = services.dynamoClient()) {
            Map<String, String> settings = TestMigration.settings(services, services.jdbcUrl, table, prefix);
            settings.put("redis.url", sentinel.url);
            settings.put("redis.mode", "sentinel");
            settings.put("redis.sentinelMaster", PrivateSentinel.MASTER);
            settings.put("mover.rateLimit", "2000"); // about 6 s: the failover lands in the middle
            settings.put("mover.workers", "4");
            List<String> args = TestMigration.args(settings);
            MigrationConfig config = ConfigValidator.validate(new ConfigLoader(Map.of()).load(null, settings));
            TargetTable.create(dynamo, table, "id", KeyType.TEXT, SlotIndex.of(config.target()));

            Future<CliRun> copy =
                    thread.submit(() -> CliRun.of(args, "copy", "--no-progress", "--no-concurrent-writers"));
            try (UnifiedJedis redis = RedisConnector.connect(config.redis(), 2)) {
                RunState run =
                        new RedisRunState(redis, config.redis().keyspace().run(), Retrier.standard());
                Awaitility.await()
                        .atMost(Duration.ofSeconds(60))
                        .pollInterval(Duration.ofMillis(50))
                        .until(() -> copy.isDone() || run.rowsCopied() >= ROWS / 4);
            }
            if (copy.isDone()) {
                CliRun early = copy.get();
                throw new AssertionError("the copy ended before the failover: " + early.out() + early.err());
            }
            HostAndPort before = sentinel.primary();
            HostAndPort after = sentinel.killPrimary();
            assertThat(after).isNotEqualTo(before);

            CliRun copied = copy.get(180, TimeUnit.SECONDS);
            assertThat(copied.exitCode()).as(copied.out() + copied.err()).isZero();
            CliRun verified = CliRun.of(args, "verify", "--all");
            assertThat(verified.exitCode()).as(verified.out() + verified.err()).isZero();
            assertThat(verified.out()).contains("12 slots: 12 MATCH, 0 MISMATCH, 0 ERROR");
            try (Connection pg = services.postgres()) {
                assertThat(RoomEventsComparison.differences(pg, table, dynamo, table))
                        .isEmpty();
            }
        } finally {
            thread.shutdownNow();
            try (DynamoDbClient d = services.dynamoClient()) {
                d.deleteTable(b -> b.tableName(table));
            }
            try (Connection pg = services.postgres();
                    java.sql.Statement st = pg.createStatement()) {
                st.execute("DROP TABLE IF EXISTS " + table);
            }
        }
    }
}
