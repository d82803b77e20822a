package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.testkit.SharedServices;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The production jar's log lines as an operator's log pipeline receives them (ISO-8601 time with zone, host, pid
 * and the MDC in every line; one JSON object a line with {@code --log-format json}), and a metrics port that cannot
 * be served on refused before anything is written.
 */
class LogsAndPortsIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern TEXT_LINE = Pattern.compile(
            "^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}(Z|[+-]\\d\\d:\\d\\d) \\S+ \\d+ (TRACE|DEBUG|INFO|WARN|ERROR)"
                    + " +\\S+ \\[[^\\]]*\\] .*");

    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("logs");
    private final String prefix = SharedServices.unique("lg") + ":";

    @Test
    void everyLineCarriesTimeHostPidAndContextAsTextAndAsJson() throws Exception {
        try (Connection pg = services.postgres()) {
            RoomEventsGenerator.create(pg, table, 600, Instant.parse("2024-10-20T03:00:00Z"), 3, 7);
        }
        try {
            Run text = copy(List.of());
            assertThat(text.exitCode).as(text.stderr).isZero();
            List<String> lines = text.stderr.lines().toList();
            assertThat(lines).isNotEmpty();
            assertThat(lines).allSatisfy(l -> assertThat(l).matches(TEXT_LINE));
            assertThat(lines).allSatisfy(l -> assertThat(l).contains(" " + text.pid + " "));
            assertThat(lines).anySatisfy(l -> assertThat(l).contains(" Keeper [phase=keeper] "));

            assertThat(CliRun.of(CliRun.base(services, table, prefix), "reset", "--yes")
                            .exitCode())
                    .isZero();
            Run json = copy(List.of("--log-format", "json"));
            assertThat(json.exitCode).as(json.stderr).isZero();
            List<JsonNode> objects = new ArrayList<>();
            for (String line : json.stderr.lines().toList()) objects.add(JSON.readTree(line)); // each line is JSON
            assertThat(objects).isNotEmpty().allSatisfy(o -> {
                assertThat(o.path("time").asText()).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}.+");
                assertThat(o.path("host").asText()).isNotEmpty();
                assertThat(o.path("pid").asLong()).isEqualTo(json.pid);
                assertThat(o.path("level").asText()).isNotEmpty();
                assertThat(o.path("formattedMessage").asText()).isNotEmpty().doesNotContain("{}");
            });
            assertThat(objects)
                    .anySatisfy(o ->
                            assertThat(o.path("mdc").path("phase").asText()).isEqualTo("keeper"));
            // the configuration never reaches a log line: no password, no URL with one
            assertThat(json.stderr + text.stderr).doesNotContain("s3cret");
        } finally {
            try (Connection pg = services.postgres();
                    Statement st = pg.createStatement()) {
                st.execute("DROP TABLE IF EXISTS " + table);
            }
        }
    }

    /**
     * A library that logs through java.util.logging (pgjdbc warns of a URL's port out of range) prints in the product's
     * layout too, text and JSON, not in the JDK's own two-line format.
     */
    @Test
    void aLibrarysJavaUtilLoggingLineTakesTheSameLayout() throws Exception {
        List<String> badPort = List.of("--set", "source.jdbcUrl=jdbc:postgresql://127.0.0.1:99999/postgres");
        Run text = run("check", badPort);
        assertThat(text.exitCode).as(text.stderr).isEqualTo(11);
        List<String> logged =
                text.stderr.lines().filter(l -> !l.startsWith("error: ")).toList();
        assertThat(logged).anySatisfy(l -> assertThat(l).contains("99999 not valid"));
        assertThat(logged).allSatisfy(l -> assertThat(l).matches(TEXT_LINE));

        List<String> json = new ArrayList<>(badPort);
        json.addAll(List.of("--log-format", "json"));
        Run asJson = run("check", json);
        assertThat(asJson.exitCode).as(asJson.stderr).isEqualTo(11);
        List<String> objects =
                asJson.stderr.lines().filter(l -> !l.startsWith("error: ")).toList();
        assertThat(objects).anySatisfy(l -> assertThat(l).contains("99999 not valid"));
        for (String line : objects)
            assertThat(JSON.readTree(line).path("pid").asLong()).isEqualTo(asJson.pid);
    }

    @Test
    void aMetricsPortThatCannotBeServedOnIsRefusedBeforeAnythingIsWritten() throws Exception {
        try (ServerSocket taken = new ServerSocket(0)) {
            CliRun r = CliRun.of(
                    CliRun.base(services, table, prefix),
                    "copy",
                    "--no-concurrent-writers",
                    "--metrics-port",
                    Integer.toString(taken.getLocalPort()));
            assertThat(r.exitCode()).as(r.err()).isEqualTo(37);
            assertThat(r.err()).contains("metrics.port=" + taken.getLocalPort()).contains("pick another port");
        }
        // nothing was planned under the prefix
        assertThat(JSON.readTree(CliRun.of(CliRun.base(services, table, prefix), "status", "--json")
                                .out())
                        .path("status")
                        .asText())
                .isEqualTo("NOT_STARTED");
        CliRun bad = CliRun.of(CliRun.base(services, table, prefix), "copy", "--set", "metrics.port=70000");
        assertThat(bad.exitCode()).isEqualTo(10);
        assertThat(bad.err()).contains("metrics.port='70000'").contains("1-65535");
        CliRun format = CliRun.of(CliRun.base(services, table, prefix), "status", "--log-format", "xml");
        assertThat(format.exitCode()).isEqualTo(10);
        assertThat(format.err()).contains("log.format='xml'").contains("json").contains("text");
    }

    private record Run(int exitCode, long pid, String stderr) {}

    private Run copy(List<String> more) throws Exception {
        List<String> args = new ArrayList<>(List.of(
                "--no-progress",
                "--no-concurrent-writers",
                "--create-table",
                "--set",
                "source.password=s3cret")); // trust auth ignores it; it must never be logged
        args.addAll(more);
        return run("copy", args);
    }

    /** The production jar in its own JVM, as an operator runs it: {@code command}, the base, then {@code more}. */
    private Run run(String command, List<String> more) throws Exception {
        List<String> cmd = ShadedJar.java("512m");
        cmd.add(command);
        cmd.addAll(CliRun.base(services, table, prefix));
        cmd.addAll(more); // last: a --set here overrides the base's
        Process p = new ProcessBuilder(cmd)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        p.getOutputStream().close();
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        return new Run(p.exitValue(), p.pid(), err);
    }
}
