package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rebalance.cdc.TailPreflight;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.testkit.SharedServices;
import java.io.File;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * {@code rebalance cutover} end to end: pre-checks refuse with reasons until the copy is finished and verified,
 * {@code --prepare} installs what the cutover needs, a cutover process killed with {@code kill -9} semantics before
 * OPEN_TARGET leaves routing SOURCE, status says it was interrupted and what to run, {@code --recover} cleans up,
 * then a cutover, a rollback, a second cutover and {@code --close-window} run, and a rollback after that is refused.
 */
class CutoverCommandIT {
    private static final com.fasterxml.jackson.databind.ObjectMapper JSON =
            new com.fasterxml.jackson.databind.ObjectMapper();

    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("cutcli");
    private final String prefix = SharedServices.unique("cc") + ":";

    private List<String> args(String... words) {
        List<String> args = new ArrayList<>(List.of(words));
        args.addAll(CliRun.base(services, table, prefix));
        args.addAll(List.of(
                "--set", "tail.slotName=" + table,
                "--set", "tail.publication=" + table,
                "--set", "cutover.pgFence=public." + table + "_fence",
                "--set", "cutover.dynamoFence=" + table + "_fence"));
        return args;
    }

    /** As the table's owner could: the fence's trigger disabled for one write, in one transaction. */
    private void bypassTheTrigger(String write) throws Exception {
        try (Connection pg = services.postgres();
                Statement st = pg.createStatement()) {
            String trigger = table + "_fence";
            st.execute("BEGIN; ALTER TABLE " + table + " DISABLE TRIGGER " + trigger + "; " + write + "; ALTER TABLE "
                    + table + " ENABLE ALWAYS TRIGGER " + trigger + "; COMMIT");
        }
    }

    private String anyId() throws Exception {
        try (Connection pg = services.postgres();
                Statement st = pg.createStatement();
                ResultSet rs = st.executeQuery("SELECT id FROM " + table + " ORDER BY id LIMIT 1")) {
            rs.next();
            return rs.getString(1);
        }
    }

    private long seq(String id) throws Exception {
        try (Connection pg = services.postgres();
                Statement st = pg.createStatement();
                ResultSet rs = st.executeQuery("SELECT seq FROM " + table + " WHERE id = '" + id + "'")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private CliRun run(String... words) {
        return CliRun.of(args(words).toArray(String[]::new));
    }

    @Test
    void preparedCheckedKilledRecoveredThenCutRolledBackAndClosed() throws Exception {
        try (Connection pg = services.postgres()) {
            RoomEventsGenerator.create(pg, table, 2_000, Instant.parse("2024-10-20T04:00:00Z"), 4, 3);
        }
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try {
            CliRun early = run("cutover", "--dry-run");
            assertThat(early.exitCode()).as(early.out() + early.err()).isEqualTo(31);
            assertThat(early.out()).contains("FAILED copy").contains("the cutover would be refused");
            CliRun earlyJson = run("cutover", "--dry-run", "--json");
            assertThat(earlyJson.exitCode()).isEqualTo(31);
            JsonSchemas.assertValid("cutover", earlyJson.out());
            var dryTree = JSON.readTree(earlyJson.out());
            assertThat(dryTree.path("wouldRun").isBoolean()).isTrue();
            assertThat(dryTree.path("wouldRun").asBoolean()).isFalse();
            assertThat(dryTree.path("maxWriteBlockMs").isIntegralNumber()).isTrue();
            assertThat(dryTree.path("preChecks").findValuesAsText("name")).contains("copy");
            assertThat(dryTree.path("steps").size()).isPositive();

            Future<CliRun> tail = thread.submit(() -> run("tail", "--create-table"));
            Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> {
                try (Connection pg = services.postgres()) {
                    return TailPreflight.slot(pg, table).active();
                }
            });
            CliRun prepared = run("cutover", "--prepare");
            assertThat(prepared.exitCode()).as(prepared.err()).isZero();
            assertThat(prepared.out())
                    .contains("route: SOURCE")
                    .contains("stream of " + table + " enabled")
                    .contains("trigger " + table + "_fence on " + table);
            assertThat(run("copy", "--no-progress").exitCode()).isZero();
            CliRun verified = run("verify", "--all");
            assertThat(verified.exitCode()).as(verified.out()).isZero();
            Awaitility.await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                CliRun dry = run("cutover", "--dry-run");
                assertThat(dry.exitCode()).as(dry.out()).isZero();
                assertThat(dry.out()).contains("all pre-checks pass").contains("ok     reverse stream: running");
            });

            // a cutover process killed (Runtime.halt, as kill -9) before it opens DynamoDB
            List<String> cmd = new ArrayList<>(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp",
                    "target/rebalance.jar" + File.pathSeparator + "target/test-classes",
                    KilledCutover.class.getName(),
                    "OPEN_TARGET"));
            cmd.addAll(args("cutover"));
            Process killed = new ProcessBuilder(cmd)
                    .redirectErrorStream(true)
                    .redirectOutput(new File("target/" + table + "-killed.log"))
                    .start();
            assertThat(killed.waitFor(120, TimeUnit.SECONDS)).isTrue();
            assertThat(killed.exitValue()).isEqualTo(137);
            Awaitility.await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(
                            run("status").out())
                    .contains(table + ": SOURCE, read postgres, write postgres")
                    .contains("last       cutover interrupted at step OPEN_TARGET")
                    .contains("run `rebalance cutover --recover`"));
            CliRun recovered = run("cutover", "--recover");
            assertThat(recovered.exitCode()).as(recovered.err()).isZero();
            assertThat(recovered.out()).contains("the stores follow the route (SOURCE)");

            CliRun cut = run("cutover");
            assertThat(cut.exitCode()).as(cut.out() + cut.err()).isZero();
            assertThat(cut.out())
                    .containsPattern("cutover of scope '" + table + "' done: writes were blocked for \\d+ ms");
            assertThat(run("status").out())
                    .contains(table + ": TARGET, read dynamodb, write dynamodb")
                    .contains("written    0 keys to DynamoDB since the flip, logged for a rollback to compare")
                    .contains("forward tail HELD")
                    .containsPattern("reverse    streaming, lag \\d+ ms");
            assertThat(run("status", "--json").out())
                    .containsPattern(
                            "\"writtenToDynamo\"\\s*:\\s*\\{\\s*\"keys\"\\s*:\\s*0,\\s*\"complete\"\\s*:\\s*true");
            assertThat(run("status").out())
                    .contains("trigger    " + table + "_fence on " + table + ": Postgres refuses every write there");
            String id = anyId();
            try (Connection pg = services.postgres();
                    Statement st = pg.createStatement()) {
                assertThatThrownBy(() -> st.execute("UPDATE " + table + " SET seq = seq + 1 WHERE id = '" + id + "'"))
                        .as("a plain write after the flip")
                        .hasMessageContaining("route TARGET")
                        .hasMessageContaining("nothing was written");
            }
            long seq = seq(id);
            bypassTheTrigger("UPDATE " + table + " SET seq = seq + 1 WHERE id = '" + id + "'");
            Awaitility.await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(
                            run("status").out())
                    .contains("BYPASSED   1 key(s) written to Postgres past its fence")
                    .contains(id));
            var bypassed = JSON.readTree(run("status", "--json").out()).path("routing");
            assertThat(bypassed.path("bypassedWrites").path("keys").asLong()).isEqualTo(1);
            assertThat(bypassed.path("fenceTrigger").path("state").asText()).isEqualTo("in place");
            CliRun back = run("cutover", "--rollback");
            assertThat(back.exitCode()).as(back.out() + back.err()).isZero();
            assertThat(back.out()).contains("0 keys written to DynamoDB since the flip equal in Postgres");
            assertThat(run("status").out()).contains(table + ": SOURCE, read postgres, write postgres");
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .alias("the rollback lifted the hold: the tail carries the bypassing write to DynamoDB")
                    .untilAsserted(() -> assertThat(run("status").out()).doesNotContain("BYPASSED"));

            CliRun again = run("cutover", "--json");
            assertThat(again.exitCode()).as(again.err()).isZero();
            JsonSchemas.assertValid("cutover", again.out());
            JsonSchemas.assertValid("status", run("status", "--json").out()); // with a route and the reverse stream
            var outcome = JSON.readTree(again.out());
            assertThat(outcome.path("op").asText()).isEqualTo("cutover");
            assertThat(outcome.path("blockedMs").isIntegralNumber()).isTrue();
            assertThat(outcome.path("token").isIntegralNumber()).isTrue();
            assertThat(outcome.path("stepMs").size()).isPositive();
            CliRun unconfirmed = run("cutover", "--close-window");
            assertThat(unconfirmed.exitCode()).as("asks for --yes").isEqualTo(ErrorCode.CONFIG_INVALID.exitCode());
            assertThat(unconfirmed.err()).contains("cannot be undone").contains("--yes");
            assertThat(run("status").out()).as("nothing changed").contains(table + ": TARGET, read dynamodb");
            long carried = seq(id);
            assertThat(carried)
                    .as("the bypassing write, carried over after the rollback")
                    .isEqualTo(seq + 1);
            bypassTheTrigger("UPDATE " + table + " SET seq = seq + 1 WHERE id = '" + id + "'");
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .untilAsserted(() -> assertThat(run("status").out()).contains("BYPASSED"));
            CliRun held = run("cutover", "--close-window", "--yes");
            assertThat(held.exitCode()).as(held.out() + held.err()).isEqualTo(31);
            assertThat(held.err())
                    .contains(id)
                    .contains("the window stays open")
                    .contains("--rollback");
            // undone in Postgres: the row equals its item again, so close-window finds it reconciled; but not before
            // the tail has read the WAL up to then, or a write made just before would not be recorded yet
            bypassTheTrigger("UPDATE " + table + " SET seq = seq - 1 WHERE id = '" + id + "'");
            tail.cancel(true);
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
                try (Connection pg = services.postgres()) {
                    return !TailPreflight.slot(pg, table).active();
                }
            });
            CliRun tailless = run("cutover", "--close-window", "--yes");
            assertThat(tailless.exitCode()).as(tailless.out() + tailless.err()).isEqualTo(31);
            assertThat(tailless.err()).contains("no `rebalance tail` runs").contains("Nothing was changed");
            tail = thread.submit(() -> run("tail"));
            Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> {
                try (Connection pg = services.postgres()) {
                    return TailPreflight.slot(pg, table).active();
                }
            });
            CliRun closed = run("cutover", "--close-window", "--yes");
            assertThat(closed.exitCode()).as(closed.out() + closed.err()).isZero();
            assertThat(run("status").out()).doesNotContain("BYPASSED");
            CliRun refused = run("cutover", "--rollback");
            assertThat(refused.exitCode()).isEqualTo(31);
            assertThat(refused.err())
                    .contains("rollback window")
                    .contains("is closed")
                    .contains("refused");

            tail.cancel(true);
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
                try (Connection pg = services.postgres()) {
                    return !TailPreflight.slot(pg, table).active();
                }
            });
        } finally {
            thread.shutdownNow();
            CutoverTables.drop(services, table);
        }
    }
}
