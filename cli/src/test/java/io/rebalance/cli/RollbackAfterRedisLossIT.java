package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.local.DynamoDbLocalServer;
import io.rebalance.protocol.route.Target;
import io.rebalance.sim.AppSimulator;
import io.rebalance.testkit.PrivateRedis;
import io.rebalance.testkit.SharedServices;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Redis restarted empty in the rollback window while an application writes through the guard: the copy's state, the
 * route, the log of keys written to DynamoDB, the token counter and the tail's positions are gone. {@code status}
 * still shows the finished copy (kept on the Postgres fence), and {@code cutover --rollback}, without {@code
 * --verify-all}, completes within its write-block budget (it starts the log again and compares every key before the
 * window, ADR 12). Both stores then hold every acknowledged write exactly once.
 */
class RollbackAfterRedisLossIT {
    /** An application writing 100 times a second (90% updates): the suite shares 2 cores with it. */
    private static final AppSimulator.Load LOAD = new AppSimulator.Load(10, 100, 2, 50, 0.9, 0.01);

    private static final String ALLOW = "--allow-redis-without-aof";

    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("lossback");
    private final String prefix = SharedServices.unique("lb") + ":";

    @Test
    void statusShowsTheFinishedCopyAndTheRollbackCompletesWithNothingLost() throws Exception {
        // its own DynamoDB Local: the stream the rollback reads makes the shared server's later streamed writes slow
        try (PrivateRedis redis = PrivateRedis.start("--appendonly", "no", "--save", "");
                DynamoDbLocalServer dynamo = SharedServices.ownDynamo()) {
            Map<String, String> settings = TailedTable.settings(services, table, prefix);
            settings.put("redis.url", redis.url);
            settings.put("target.endpoint", dynamo.endpoint());
            // a tail behind the application on a loaded machine drains inside the window (the cutover waits for it
            // within --max-write-block, else aborts and is run again); refusing it at the pre-check is tested elsewhere
            settings.put("cutover.maxTailLag", "120s");
            List<String> args = TailedTable.args(settings);
            try (TailedTable t = new TailedTable(services, table, settings, 3_000, 17)) {
                assertThat(run(args, "cutover", "--prepare", ALLOW).exitCode()).isZero();
                assertThat(run(args, "copy", "--no-progress").exitCode()).isZero();
                assertThat(run(args, "verify", "--all").exitCode()).isZero();
                Awaitility.await()
                        .atMost(Duration.ofSeconds(30))
                        .until(() -> run(args, "cutover", "--dry-run", ALLOW).exitCode() == 0);

                try (AppSimulator app = new AppSimulator(t.config, t.source, t.redis, t.dynamo, t.guard())) {
                    app.start(LOAD, 19);
                    // an abort (exit 32: the tail did not catch up within the budget on a loaded machine) or a
                    // pre-check refusing a lagging tail (31: "wait until the tail caught up") changes nothing and says
                    // to run it again, as a user would
                    CliRun cut;
                    try {
                        cut = Awaitility.await() // an attempt can take a minute on a loaded machine
                                .atMost(Duration.ofSeconds(240))
                                .until(
                                        () -> run(args, "cutover", ALLOW, "--max-write-block", "15s"),
                                        r -> r.exitCode() != 32
                                                && !(r.exitCode() == 31
                                                        && r.err().contains("cutover.maxTailLag")));
                    } catch (org.awaitility.core.ConditionTimeoutException e) { // say where the tail stood
                        throw new AssertionError(
                                e.getMessage() + "\nstatus:\n"
                                        + run(args, "status").out(),
                                e);
                    }
                    assertThat(cut.exitCode()).as(cut.out() + cut.err()).isZero();
                    app.awaitAcknowledged(Target.DYNAMODB, 300, Duration.ofSeconds(60));

                    redis.restart();

                    CliRun status = run(args, "status");
                    assertThat(status.out())
                            .as("the copy, given back from the Postgres fence")
                            .contains("status FINISHED")
                            .containsPattern("slots +4 total, 4 finished");
                    CliRun recovered = run(args, "cutover", "--recover"); // as docs/redis.md says: writes resume
                    assertThat(recovered.exitCode())
                            .as(recovered.out() + recovered.err())
                            .isZero();
                    assertThat(recovered.out()).contains("rebuilt from the fences: TARGET");
                    Awaitility.await() // the tail takes its lease again, and its reverse stream reports
                            .atMost(Duration.ofSeconds(60))
                            .untilAsserted(
                                    () -> assertThat(run(args, "status").out()).contains("reverse    streaming"));
                    long toPostgres = app.ledger().acknowledged(Target.POSTGRES);
                    // after the loss the reverse stream reads the stream again from its trim horizon: a rollback
                    // aborted because no round finished within its budget (exit 32) is run again, as a user would
                    StringBuilder attempts =
                            new StringBuilder(); // the first attempt restarts the log, even if it aborts
                    CliRun back = Awaitility.await()
                            .atMost(Duration.ofSeconds(180))
                            .until(
                                    () -> {
                                        CliRun r =
                                                run(args, "cutover", "--rollback", ALLOW, "--max-write-block", "15s");
                                        attempts.append(r.out()).append(r.err());
                                        return r;
                                    },
                                    r -> r.exitCode() != 32);
                    assertThat(back.exitCode()).as(back.out() + back.err()).isZero();
                    assertThat(attempts.toString())
                            .contains("the log of written keys was incomplete (")
                            .contains("every key of both stores compared before the window");
                    app.awaitAcknowledged(Target.POSTGRES, toPostgres + 200, Duration.ofSeconds(60));
                    app.pause();

                    Map<String, Long> postgres = app.postgresSeqs();
                    assertThat(app.ledger().check("postgres", postgres, 10))
                            .as("every write acknowledged by either store, in Postgres once")
                            .isEmpty();
                    Awaitility.await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(
                                    app.dynamoAgainst(postgres))
                            .as("DynamoDB once the tail carried the writes after the rollback")
                            .isEmpty());
                    assertThat(app.ledger().acknowledged(Target.DYNAMODB)).isGreaterThanOrEqualTo(300);
                }
            }
        }
    }

    private static CliRun run(List<String> flags, String... words) {
        return CliRun.of(flags, words);
    }
}
