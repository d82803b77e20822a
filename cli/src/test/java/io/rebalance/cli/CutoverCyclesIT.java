package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.cli.sim.AppSimulator;
import io.rebalance.cli.sim.CutoverCycles;
import io.rebalance.client.GuardSettings;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.route.Target;
import io.rebalance.core.source.SourceTable;
import io.rebalance.testkit.SharedServices;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Issue 5, acceptance point 1: an application writing 500 writes/s through the guard and reading through the router
 * while {@code rebalance cutover} and {@code rebalance cutover --rollback} run 20 times, with writes going on across
 * every flip. After each cycle both stores hold every acknowledged write exactly once (each write adds one to a row's
 * seq, so a lost write shows as too low and a doubled one as too high), and no read anywhere returned a seq older
 * than a write acknowledged before it began.
 */
class CutoverCyclesIT {
    private static final int CYCLES = 20;

    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("cycles");
    private final String prefix = SharedServices.unique("cy") + ":";

    private Map<String, String> settings() {
        return TailedTable.settings(services, table, prefix);
    }

    private List<String> args() {
        return TailedTable.args(settings());
    }

    @Test
    void twentyCyclesUnderLoadLoseNothingApplyNothingTwiceAndServeNoStaleRead() throws Exception {
        try (TailedTable t = new TailedTable(services, table, settings(), 2_000, 5)) {
            runCycles(t.config, t.source, t.redis, t.dynamo);
        }
    }

    /** The tail runs: prepare, copy, verify, then the cycles under the application's load. */
    private void runCycles(MigrationConfig config, SourceTable source, UnifiedJedis redis, DynamoDbClient dynamo)
            throws Exception {
        CutoverCycles setup = new CutoverCycles(args(), null, System.out);
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
            List<CutoverCycles.Cycle> cycles = new CutoverCycles(args(), app, report).run(CYCLES, 250);
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
                assertThat(c.cutover().exitCode())
                        .as("cutover %d: %s", c.number(), c.cutover().output())
                        .isZero();
                assertThat(c.rollback().exitCode())
                        .as("rollback %d: %s", c.number(), c.rollback().output())
                        .isZero();
                assertThat(c.postgresProblems())
                        .as("Postgres after cycle %d", c.number())
                        .isEmpty();
                assertThat(c.dynamoProblems())
                        .as("DynamoDB after cycle %d", c.number())
                        .isEmpty();
                assertThat(c.writesToDynamo()).isGreaterThanOrEqualTo(250);
                assertThat(c.writesToPostgres()).isGreaterThanOrEqualTo(250);
            }
            assertThat(app.staleReads()).isEmpty();
            assertThat(app.ledger().failures())
                    .as("failed writes: %s", app.errors())
                    .isZero();
            assertThat(app.errors()).isEmpty();
            assertThat(app.reads(Target.POSTGRES)).isPositive();
            assertThat(app.reads(Target.DYNAMODB)).isPositive();
        }
    }
}
