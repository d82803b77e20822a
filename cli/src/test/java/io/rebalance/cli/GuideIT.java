package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rebalance.cdc.TailPreflight;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.testkit.SharedServices;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;

/**
 * docs/guide.md followed step by step on a new table: every {@code bin/rebalance} line of its shell blocks runs, in
 * order, in this JVM, against the example configuration pointed at the test's services (as a reader points it at
 * theirs); a {@code tail} that is not {@code --drop-slot} runs in the background until the guide drops its slot. Each
 * command must succeed, the verification ends MATCH and the table ends cut over (route FINAL).
 */
class GuideIT {
    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("guide");
    private final String prefix = SharedServices.unique("guide") + ":";

    /** The example's settings that name the reader's machines, pointed at this test's instead. */
    private List<String> local() {
        List<String> flags = new ArrayList<>(CliRun.base(services, table, prefix));
        for (String kv : List.of(
                "source.user=postgres",
                "target.region=us-east-1",
                "tail.slotName=" + table,
                "tail.publication=" + table,
                "cutover.pgFence=public." + table + "_fence",
                "cutover.dynamoFence=" + table + "_fence",
                "cutover.applicationRoles=",
                "cutover.maxWriteBlock=5s")) {
            flags.add("--set");
            flags.add(kv);
        }
        return flags;
    }

    @Test
    void theGuideFollowedOnANewTableEndsMatchingAndCutOver() throws Exception {
        Path root = Path.of(System.getProperty("user.dir")).getParent();
        String guide = Files.readString(root.resolve("docs").resolve("guide.md"));
        List<String> commands = commands(guide);
        List<String> untils = guide.lines()
                .filter(l -> l.startsWith("bin/rebalance ") && l.contains("# again until"))
                .map(l -> l.substring(0, l.indexOf(" #")).trim())
                .toList();
        assertThat(untils).as("the dry run is repeated until it passes").isNotEmpty();
        assertThat(commands).as("the guide's commands").hasSizeGreaterThan(10);
        try (Connection pg = services.postgres()) {
            RoomEventsGenerator.create(pg, table, 2_000, Instant.parse("2024-10-20T06:00:00Z"), 6, 7);
        }
        ExecutorService background = Executors.newSingleThreadExecutor();
        Future<CliRun> tail = null;
        List<String> ran = new ArrayList<>();
        boolean cutOver = false;
        try {
            for (String command : commands) {
                List<String> args = new ArrayList<>(Arrays.asList(command.split("\\s+")));
                args.remove(0); // bin/rebalance
                int config = args.indexOf("examples/migration.yaml");
                args.set(
                        config,
                        root.resolve("examples").resolve("migration.yaml").toString());
                args.addAll(local());
                if (args.get(0).equals("tail") && !args.contains("--drop-slot")) {
                    tail = background.submit(() -> CliRun.of(args.toArray(String[]::new)));
                    Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> {
                        try (Connection pg = services.postgres()) {
                            return TailPreflight.slot(pg, table).active();
                        }
                    });
                    ran.add(command);
                    continue;
                }
                if (args.contains("--drop-slot") && tail != null) { // "stop the tail first"
                    tail.cancel(true);
                    Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
                        try (Connection pg = services.postgres()) {
                            return !TailPreflight.slot(pg, table).active();
                        }
                    });
                }
                CliRun r = command.endsWith("--drop-slot") || untils.contains(command)
                        ? retried(args) // the guide says to run it again until it passes
                        : CliRun.of(args.toArray(String[]::new));
                assertThat(r.exitCode())
                        .as("after %s:%n%s%n%s%n%s", ran, command, r.out(), r.err())
                        .isZero();
                if (command.contains("verify") && command.contains("--all") && !command.contains("--repair"))
                    assertThat(r.out()).as(command).containsPattern("(\\d+) slots: \\1 MATCH, 0 MISMATCH, 0 ERROR");
                if (command.contains("--close-window")) {
                    assertThat(CliRun.of(local(), "status").out())
                            .as("cut over for good")
                            .contains(table + ": FINAL, read dynamodb, write dynamodb");
                    cutOver = true;
                }
                ran.add(command);
            }
            assertThat(cutOver).as("the guide closes the window").isTrue();
            assertThat(ran).as("ran in order").containsExactlyElementsOf(commands);
            String insert = "INSERT INTO " + table + " VALUES ('01JAKTE8790000000000000001',"
                    + " gen_random_uuid(), 'plain', NULL, now(), 1)";
            try (Connection pg = services.postgres();
                    Statement st = pg.createStatement()) {
                assertThatThrownBy(() -> st.execute(insert))
                        .as("a write to the retired table is refused until the clean-up")
                        .hasMessageContaining("route FINAL");
                for (String sql : sql(guide)) {
                    st.execute(sql.replace("public.rebalance_fence", "public." + table + "_fence"));
                }
                st.execute(insert); // the guide's clean-up removed the trigger with the fence
            }
            assertThat(CliRun.of(local(), "status").out())
                    .as("reset forgot the route")
                    .contains("no scope prepared");
        } finally {
            if (tail != null) tail.cancel(true);
            background.shutdownNow();
            background.awaitTermination(30, TimeUnit.SECONDS);
            CutoverTables.drop(services, table);
        }
    }

    /**
     * A command the guide runs "again until" it passes (a dry run while the reverse stream starts), or a {@code tail
     * --drop-slot} right after the tail stopped (refused while its lease lives on).
     */
    private static CliRun retried(List<String> args) {
        AtomicReference<CliRun> last = new AtomicReference<>();
        try {
            Awaitility.await()
                    .atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(500))
                    .until(() -> {
                        last.set(CliRun.of(args.toArray(String[]::new)));
                        return last.get().exitCode() == 0;
                    });
        } catch (ConditionTimeoutException stillFailing) {
            // the caller's assertion prints the last attempt's output
        }
        return last.get();
    }

    /** Every `bin/rebalance` line of the guide's ```sh blocks, without its comment. */
    /** The statements of the guide's SQL blocks, comments left out. */
    static List<String> sql(String guide) {
        List<String> out = new ArrayList<>();
        boolean inSql = false;
        for (String line : guide.lines().toList()) {
            if (line.startsWith("```")) {
                inSql = !inSql && line.equals("```sql");
                continue;
            }
            int comment = line.indexOf("--");
            String statement = (comment < 0 ? line : line.substring(0, comment)).trim();
            if (inSql && !statement.isEmpty()) out.add(statement.replaceAll(";$", ""));
        }
        assertThat(out).as("the guide's clean-up").isNotEmpty();
        return out;
    }

    static List<String> commands(String guide) {
        List<String> out = new ArrayList<>();
        boolean inShell = false;
        for (String line : guide.lines().toList()) {
            if (line.startsWith("```")) {
                inShell = !inShell && line.equals("```sh");
                continue;
            }
            if (inShell && line.startsWith("bin/rebalance ")) {
                int comment = line.indexOf(" #");
                out.add((comment < 0 ? line : line.substring(0, comment)).trim());
            }
        }
        return out;
    }
}
