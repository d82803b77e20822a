package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.cdc.TailPreflight;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.testkit.SharedServices;
import io.rebalance.testkit.TcpProxy;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * {@code --metrics-port} end to end: a real tail and a real copy serve Prometheus metrics and health while they work.
 * The counters move with the work; a tail whose DynamoDB stops answering shows its lag growing and stays ready (it
 * is not the tail's fault, and restarting it would not help); a standby tail is live but not ready.
 */
class MetricsIT {
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("metrics");
    private final String prefix = SharedServices.unique("mt") + ":";

    private CliRun run(String endpoint, String... words) {
        List<String> args = new ArrayList<>(List.of(words));
        args.addAll(CliRun.base(services, table, prefix));
        args.addAll(List.of(
                "--set",
                "tail.slotName=" + table,
                "--set",
                "tail.publication=" + table,
                "--set",
                "target.endpoint=" + endpoint));
        return CliRun.of(args.toArray(String[]::new));
    }

    @Test
    void copyAndTailServeMetricsAndHealthWhileTheyWork() throws Exception {
        Instant end = Instant.parse("2024-10-20T06:00:00Z");
        try (Connection pg = services.postgres()) {
            RoomEventsGenerator.create(pg, table, 3_000, end, 6, 7);
        }
        String direct = services.dynamo.endpoint();
        URI dynamo = URI.create(direct);
        ExecutorService threads = Executors.newFixedThreadPool(3);
        int activePort = freePort();
        int standbyPort = freePort();
        int copyPort = freePort();
        try (TcpProxy proxy = new TcpProxy(dynamo.getHost(), dynamo.getPort())) {
            String throughProxy = "http://127.0.0.1:" + proxy.port();
            Future<CliRun> active = threads.submit(
                    () -> run(throughProxy, "tail", "--create-table", "--metrics-port", Integer.toString(activePort)));
            Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> {
                if (active.isDone()) throw new AssertionError("the tail ended: " + active.get());
                try (Connection pg = services.postgres()) {
                    return TailPreflight.slot(pg, table).active();
                }
            });
            assertThat(get(activePort, "/health/ready").statusCode()).isEqualTo(200);
            assertThat(get(activePort, "/health/ready").body()).contains("\"lease\"");
            assertThat(value(activePort, "rebalance_tail_active")).isEqualTo(1.0);
            assertThat(value(activePort, "rebalance_route_status", "scope", table))
                    .as("the table's route: none until a cutover is prepared")
                    .isEqualTo(-1.0);

            // a second tail stands by: alive, not ready, and says why
            Future<CliRun> standby =
                    threads.submit(() -> run(direct, "tail", "--metrics-port", Integer.toString(standbyPort)));
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .ignoreExceptions()
                    .until(() -> get(standbyPort, "/health/ready").body().contains("\"lease\""));
            assertThat(get(standbyPort, "/health/live").statusCode()).isEqualTo(200);
            HttpResponse<String> notReady = get(standbyPort, "/health/ready");
            assertThat(notReady.statusCode()).isEqualTo(503);
            assertThat(notReady.body()).contains("\"status\":\"DOWN\"").contains("stands by");
            assertThat(value(standbyPort, "rebalance_tail_active")).isEqualTo(0.0);
            // status counts it (it did not count standby tails)
            CliRun status = run(direct, "status", "--json");
            assertThat(new com.fasterxml.jackson.databind.ObjectMapper()
                            .readTree(status.out())
                            .path("tail")
                            .path("standingBy")
                            .asLong())
                    .as(status.out())
                    .isEqualTo(1);
            assertThat(run(direct, "status").out()).contains("; 1 standing by");

            // the copy, paced so that it is scraped while it works (about 15 s)
            Future<CliRun> copy = threads.submit(() -> run(
                    direct,
                    "copy",
                    "--no-progress",
                    "--workers", // one slot after another, so some finish while the copy still runs
                    "1",
                    "--rate",
                    "200",
                    "--metrics-port",
                    Integer.toString(copyPort)));
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .ignoreExceptionsMatching(e -> !(e instanceof AssertionError))
                    .until(() -> {
                        if (copy.isDone()) throw new AssertionError("the copy ended: " + copy.get());
                        return value(copyPort, "rebalance_copy_rows_total") > 0;
                    });
            double rowsEarly = value(copyPort, "rebalance_copy_rows_total");
            assertThat(value(copyPort, "rebalance_copy_rate_limit_rows_per_second"))
                    .isEqualTo(200.0);
            assertThat(get(copyPort, "/health/ready").statusCode()).isEqualTo(200);
            assertThat(get(copyPort, "/health/ready").body())
                    .contains("\"redis\"")
                    .contains("\"postgres\"");
            assertThat(get(copyPort, "/health/live").statusCode()).isEqualTo(200);
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .ignoreExceptions()
                    .until(() -> value(copyPort, "rebalance_copy_rows_total") > rowsEarly
                            && value(copyPort, "rebalance_copy_slots", "state", "finished") > 0);
            String scrape = get(copyPort, "/metrics").body();
            assertThat(scrape)
                    .contains("rebalance_copy_rows_refused_total")
                    .contains("rebalance_dynamodb_throttled_total")
                    .contains("rebalance_dynamodb_unprocessed_items_total")
                    .contains("rebalance_lease_lost_total{command=\"copy\",part=\"copy\"")
                    .contains("rebalance_copy_slots{command=\"copy\",prefix=\"" + prefix + "\",state=\"waiting\"}")
                    .contains("jvm_memory_used_bytes")
                    .contains("process_cpu_usage");
            assertThat(copy.get().exitCode()).as(copy.get().err()).isZero();

            // the tail applies changes and counts them
            double applied = value(activePort, "rebalance_tail_changes_applied_total");
            change("UPDATE " + table + " SET kind = 'edited' WHERE seq % 7 = 0");
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> value(activePort, "rebalance_tail_changes_applied_total") > applied);
            assertThat(value(activePort, "rebalance_tail_slot_retained_wal_bytes"))
                    .isGreaterThan(0);

            // DynamoDB stops answering the active tail: its lag grows, and it stays ready
            proxy.cut();
            change("UPDATE " + table + " SET kind = 'stalled' WHERE seq % 5 = 0");
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> value(activePort, "rebalance_tail_lag_seconds") > 2);
            double lag = value(activePort, "rebalance_tail_lag_seconds");
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> value(activePort, "rebalance_tail_lag_seconds") > lag + 2);
            assertThat(get(activePort, "/health/ready").statusCode()).isEqualTo(200);
            assertThat(get(activePort, "/health/live").statusCode()).isEqualTo(200);

            // DynamoDB answers again: the waiting changes land and the lag falls back to nothing
            proxy.restore();
            Awaitility.await()
                    .atMost(Duration.ofSeconds(60))
                    .until(() -> value(activePort, "rebalance_tail_lag_seconds") == 0.0);
            // the standby first, so that it does not take the lease over when the active one stops
            standby.cancel(true);
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> !answers(standbyPort));
            active.cancel(true);
        } finally {
            threads.shutdownNow();
            // a tail stopped by interrupting its thread (not by SIGTERM, as a user stops it) can leave its
            // replication connection to time out (wal_sender_timeout): dropSlot ends it rather than wait
            services.dropSlot(table);
            try (Connection pg = services.postgres();
                    Statement st = pg.createStatement()) {
                st.execute("DROP PUBLICATION IF EXISTS " + table);
                st.execute("DROP TABLE IF EXISTS " + table);
            }
        }
    }

    private void change(String sql) throws Exception {
        try (Connection pg = services.postgres();
                Statement st = pg.createStatement()) {
            st.execute(sql);
        }
    }

    private static boolean answers(int port) {
        try {
            get(port, "/health/live");
            return true;
        } catch (Exception e) {
            return false;
        }
    }

    static HttpResponse<String> get(int port, String path) throws Exception {
        return HTTP.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                        .timeout(Duration.ofSeconds(5))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The value of the series {@code name} (with {@code label="value"} when given) in a scrape; NaN when absent. */
    static double value(int port, String name, String... label) throws Exception {
        String body = get(port, "/metrics").body();
        String want = label.length == 0 ? "" : label[0] + "=\"" + label[1] + "\"";
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "(\\{[^}]*\\})? (\\S+)$")
                .matcher(body);
        while (m.find()) {
            if (m.group(1) == null || m.group(1).contains(want)) return Double.parseDouble(m.group(2));
        }
        return Double.NaN;
    }

    static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
