package io.rebalance.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.cli.RebalanceCommand;
import io.rebalance.cutover.CutoverHooks;
import io.rebalance.testkit.SharedServices;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;

/**
 * {@code rebalance-demo.jar demo}, as scripts/demo.sh runs it, on a small table: the copy, the tail, verify and repair,
 * then the cutover's lifecycle under an application writing through WriteGuard and reading through Router
 * (prepare, cutover, rollback, cutover, close-window), each write-blocked window printed, and both stores compared
 * with the application's acknowledged writes. The demo exits non-zero when any of it fails.
 */
class DemoIT {
    private static final Path JAR = Path.of("target/rebalance-demo.jar");
    private static final String MISTYPED = "REBALANCE_MOVER_WORKRS";
    private static final Pattern BLOCKED = Pattern.compile("writes were blocked for (\\d+) ms");

    @Test
    void theDemoJarRunsTheWholeLifecycleAndEndsCutOver() throws Exception {
        SharedServices services = SharedServices.get();
        File log = new File("target/demo-it.log");
        ProcessBuilder demo = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-Xmx1g",
                        "-jar",
                        JAR.toString(),
                        "demo",
                        "--rows",
                        "4000",
                        "--hours",
                        "6",
                        "--set",
                        "source.jdbcUrl=" + services.jdbcUrl,
                        "--set",
                        "redis.url=" + services.redisUrl)
                .redirectErrorStream(true)
                .redirectOutput(log);
        demo.environment().put(MISTYPED, "x"); // the demo loads its configuration twice, and warns once
        Process p = demo.start();
        assertThat(p.waitFor(10, TimeUnit.MINUTES)).as("the demo ended").isTrue();
        String out = Files.readString(log.toPath());
        assertThat(p.exitValue()).as(out).isZero();

        SoftAssertions softly = new SoftAssertions();
        softly.assertThat(out)
                .contains("8. the cutover, with an application writing through WriteGuard and reading through Router")
                .contains("$ rebalance cutover --prepare")
                .contains("$ rebalance cutover --dry-run")
                .contains("$ rebalance cutover --rollback")
                .contains("$ rebalance cutover --close-window --yes")
                .contains("Postgres against the application's ledger: every acknowledged write, once")
                .contains("DynamoDB against the ledger and Postgres, row by row: the same")
                .contains("0 stale")
                .containsPattern("routing +demo_room_events: FINAL");
        Matcher m = BLOCKED.matcher(out);
        int windows = 0;
        while (m.find()) windows++;
        String ownPart = out.substring(0, Math.max(0, out.indexOf("8. the cutover"))); // its commands warn too
        softly.assertThat(Pattern.compile("warning: .*" + MISTYPED)
                        .matcher(ownPart)
                        .results()
                        .count())
                .as("the demo's own warnings of %s", MISTYPED)
                .isEqualTo(1);
        softly.assertThat(windows)
                .as("write-blocked windows printed: cutover, rollback, cutover, close-window")
                .isEqualTo(4);
        softly.assertThat(out)
                .containsPattern("1\\. cutover +\\d+ ms")
                .containsPattern("2\\. cutover --rollback +\\d+ ms")
                .containsPattern("3\\. cutover +\\d+ ms")
                .containsPattern("4\\. cutover --close-window --yes +\\d+ ms");
        softly.assertAll();
    }

    /**
     * A cutover that cannot keep its write-blocked bound aborts (exit 32): the demo says so, exits 70, and still
     * leaves no replication slot behind on the Postgres it used.
     */
    @Test
    void aFailedCutoverFailsTheDemoAndLeavesNoSlot() throws Exception {
        SharedServices services = SharedServices.get();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code = RebalanceCommand.execute(
                new String[] {
                    "demo",
                    "--rows",
                    "2000",
                    "--hours",
                    "3",
                    "--set",
                    "source.jdbcUrl=" + services.jdbcUrl,
                    "--set",
                    "redis.url=" + services.redisUrl,
                    "--set",
                    "cutover.maxWriteBlock=1ms"
                },
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                CutoverHooks.NONE,
                List.of(DemoCommand.class, DynamoDbLocalCommand.class));
        String text = out.toString(StandardCharsets.UTF_8);
        assertThat(code).as(text).isEqualTo(70);
        assertThat(text).contains("$ rebalance cutover").contains("FAILED with exit 32");
        try (Connection pg = DriverManager.getConnection(services.jdbcUrl, "postgres", "");
                ResultSet rs = pg.createStatement()
                        .executeQuery(
                                "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'demo_room_events'")) {
            rs.next();
            assertThat(rs.getInt(1)).as("the demo's slot left behind").isZero();
        }
    }

    @Test
    void theDemoCommandsHaveHelp() {
        SoftAssertions softly = new SoftAssertions();
        for (String name : List.of("demo", "dynamodb-local")) {
            for (List<String> words : List.of(List.of(name, "--help"), List.of(name, "-h"), List.of("help", name))) {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                ByteArrayOutputStream err = new ByteArrayOutputStream();
                int code = RebalanceCommand.execute(
                        words.toArray(String[]::new),
                        new PrintStream(out, true, StandardCharsets.UTF_8),
                        new PrintStream(err, true, StandardCharsets.UTF_8),
                        CutoverHooks.NONE,
                        List.of(DemoCommand.class, DynamoDbLocalCommand.class));
                softly.assertThat(code).as("%s: %s", words, err).isZero();
                softly.assertThat(out.toString(StandardCharsets.UTF_8))
                        .as("%s", words)
                        .contains("Usage: rebalance " + name)
                        .contains("Examples:")
                        .contains("  rebalance-demo " + name);
            }
        }
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = RebalanceCommand.execute(
                new String[] {"demo", "--rows", "many"},
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                CutoverHooks.NONE,
                List.of(DemoCommand.class, DynamoDbLocalCommand.class));
        softly.assertThat(code).isEqualTo(10);
        softly.assertThat(err.toString(StandardCharsets.UTF_8))
                .as("a bad option of demo in the demo jar")
                .contains("--rows")
                .doesNotContain("production jar");
        softly.assertAll();
    }
}
