package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.client.GuardSettings;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.source.SourceTable;
import io.rebalance.local.DynamoDbLocalServer;
import io.rebalance.protocol.route.Target;
import io.rebalance.sim.AppSimulator;
import io.rebalance.sim.CutoverCycles;
import io.rebalance.testkit.PrivateRedis;
import io.rebalance.testkit.SharedServices;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * An application writing 500 writes/s through the guard and reading through the router while {@code rebalance
 * cutover} and {@code rebalance cutover --rollback} run 20 times, with writes going on across every flip. In 5 of
 * the cycles Redis (the test's own, with an append-only file) is killed and started again at a moment the seed picks
 * during the cutover or the rollback; that cycle then runs {@code cutover --recover}. After each cycle both stores
 * hold every acknowledged write exactly once (each write adds one to a row's seq, so a lost write shows as too low
 * and a doubled one as too high), hold the same seq for every row, and no read anywhere returned a seq older than a
 * write acknowledged before it began.
 */
class CutoverCyclesIT {
    private static final int CYCLES = 20;
    private static final Set<Integer> REDIS_RESTARTS = Set.of(3, 7, 11, 15, 19);

    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("cycles");
    private final String prefix = SharedServices.unique("cy") + ":";

    private PrivateRedis redis;
    private DynamoDbLocalServer dynamo;

    private Map<String, String> settings() {
        Map<String, String> s = TailedTable.settings(services, table, prefix);
        s.put("redis.url", redis.url);
        s.put("target.endpoint", dynamo.endpoint());
        return s;
    }

    private List<String> args() {
        return TailedTable.args(settings());
    }

    @Test
    void twentyCyclesUnderLoadLoseNothingApplyNothingTwiceAndServeNoStaleRead() throws Exception {
        try (PrivateRedis own = PrivateRedis.start("--appendonly", "yes");
                DynamoDbLocalServer ownDynamo = SharedServices.ownDynamo()) {
            redis = own;
            dynamo = ownDynamo;
            try (TailedTable t = new TailedTable(services, table, settings(), 2_000, 5)) {
                runCycles(t.config, t.source, t.redis, t.dynamo);
            }
        }
    }

    /** The tail runs: prepare, copy, verify, then the cycles under the application's load. */
    private void runCycles(MigrationConfig config, SourceTable source, UnifiedJedis redis, DynamoDbClient dynamo)
            throws Exception {
        CutoverCycles setup = new CutoverCycles(args(), null, System.out, RebalanceCommand::execute);
        assertThat(setup.command(List.of("cutover", "--prepare")).exitCode()).isZero();
        assertThat(setup.command(List.of("copy", "--no-progress")).exitCode()).isZero();
        assertThat(setup.command(List.of("verify", "--all")).exitCode()).isZero();
        Awaitility.await()
                .atMost(Duration.ofSeconds(30))
                .until(() -> setup.command(List.of("cutover", "--dry-run")).exitCode() == 0);

        GuardSettings guard = new GuardSettings(
                prefix,
                Duration.ofSeconds(5),
                Duration.ofSeconds(30), // above cutover.maxWriteBlock: a cutover that keeps its bound fails no write
                config.cutover().pgFence(),
                config.cutover().dynamoFence());
        try (AppSimulator app = new AppSimulator(config, source, redis, dynamo, guard);
                PrintStream report = new PrintStream(new FileOutputStream("target/cutover-cycles.txt"), true)) {
            // 500 writes/s as in the acceptance load, but 90% updates: each cutover verifies the slot the inserts
            // go to before its window, whole, so at 350 inserts/s the suite's time would grow with every cycle.
            // bench/cutover.sh keeps 70% inserts.
            app.start(AppSimulator.Load.acceptance().withUpdateShare(0.9), 7);
            List<CutoverCycles.Cycle> cycles = new CutoverCycles(args(), app, report, RebalanceCommand::execute)
                    .restartRedis(this.redis::restart, REDIS_RESTARTS, 17)
                    .run(CYCLES, 250);
            report.printf(
                    "reads: %d from Postgres, %d from DynamoDB, %d stale; writes: %d acknowledged, %d failed%n",
                    app.reads(Target.POSTGRES),
                    app.reads(Target.DYNAMODB),
                    app.staleReads().size(),
                    app.ledger().acknowledged(Target.POSTGRES) + app.ledger().acknowledged(Target.DYNAMODB),
                    app.ledger().failures());
            app.errors().forEach(report::println);

            assertThat(cycles).hasSize(CYCLES);
            for (CutoverCycles.Cycle c : cycles) {
                if (REDIS_RESTARTS.contains(c.number())) {
                    assertThat(c.restart()).isNotEmpty();
                    assertThat(c.recover().exitCode())
                            .as(
                                    "cycle %d, %s: recover: %s",
                                    c.number(), c.restart(), c.recover().output())
                            .isZero();
                    assertThat(c.rollback().exitCode())
                            .as(
                                    "cycle %d: the rollback after recovering: %s",
                                    c.number(), c.rollback().output())
                            .isIn(0, 31); // 31: the route is SOURCE already
                } else {
                    CutoverTables.assertCleanCycle(c, app);
                }
                CutoverTables.assertConsistentAfter(c);
                assertThat(c.writesToPostgres()).isGreaterThanOrEqualTo(250);
            }
            assertThat(app.staleReads()).isEmpty();
            assertThat(app.errors())
                    .as("writes and reads fail only while Redis is away or has not got its route back")
                    .allSatisfy(e -> assertThat(e).containsAnyOf("Jedis", "Redis", "routing entry"));
            assertThat(app.reads(Target.POSTGRES)).isPositive();
            assertThat(app.reads(Target.DYNAMODB)).isPositive();
        }
        CutoverTables.assertSimulatorSessionsClosed(services);
    }
}
