package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.core.slot.Ulid;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.route.RouteStatus;
import io.rebalance.protocol.route.RoutingTable;
import io.rebalance.protocol.shadow.ShadowLog;
import io.rebalance.protocol.shadow.ShadowMismatch;
import io.rebalance.protocol.shadow.ShadowOutcome;
import io.rebalance.testkit.SharedServices;
import java.awt.image.BufferedImage;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.imageio.ImageIO;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.UnifiedJedis;

/**
 * {@code rebalance dashboard} in a real browser (Debian's Chromium, headless, installed by scripts/chromium.sh when
 * missing) over a real run: a copy in progress, some slots verified and one MISMATCH. What the page shows is read
 * back from its DOM after its script ran; its screenshot is what docs/operations.md shows.
 */
class DashboardIT {
    private static final DateTimeFormatter SLOT =
            DateTimeFormatter.ofPattern("yyyyMMdd.HH").withZone(ZoneOffset.UTC);
    private static final Instant END = Instant.parse("2024-10-20T06:00:00Z");
    private static final int HOURS = 24;

    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("dash");
    private final String prefix = SharedServices.unique("db") + ":";

    private CliRun run(String... words) {
        return CliRun.of(CliRun.base(services, table, prefix), words);
    }

    @Test
    void thePageShowsTheRunInABrowser() throws Exception {
        String chromium = chromium();
        try (Connection pg = services.postgres()) {
            RoomEventsGenerator.create(pg, table, HOURS * 80, END, HOURS, 11);
        }
        ExecutorService threads = Executors.newFixedThreadPool(2);
        int port = MetricsIT.freePort();
        try (UnifiedJedis redis = services.redis()) {
            // slow enough that it still copies while the page is looked at
            Future<CliRun> copy = threads.submit(() -> run(
                    "copy",
                    "--no-progress",
                    "--no-concurrent-writers",
                    "--create-table",
                    "--workers",
                    "2",
                    "--rate",
                    "40",
                    "--set",
                    "mover.pageSize=20",
                    "--set",
                    "mover.slotRetryDelay=200ms"));
            List<Instant> finished = new ArrayList<>(); // the hours whose slots are finished
            Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> {
                if (copy.isDone()) throw new AssertionError("the copy ended: " + copy.get());
                finished.clear();
                // finished: down to the keeper's compaction watermark (their state is deleted), or saying so
                String watermark = redis.hget(new Keyspace(prefix).run().progress(), "watermark");
                boolean compacted = watermark != null && !watermark.isEmpty();
                for (int h = 1; h <= HOURS; h++) {
                    Instant hour = END.minusSeconds(3600L * h);
                    String key = new Keyspace(prefix).run().slotState(SLOT.format(hour));
                    if (compacted || "FINISHED".equals(redis.hget(key, "status"))) finished.add(hour);
                    if (SLOT.format(hour).equals(watermark)) compacted = false;
                }
                return finished.size() >= 4;
            });
            // three finished slots verified, one of them changed in Postgres behind the copy's back first
            Instant hour = finished.get(2);
            try (Connection pg = services.postgres();
                    Statement st = pg.createStatement()) {
                st.execute("UPDATE " + table + " SET kind = 'changed' WHERE id = (SELECT min(id) FROM " + table
                        + " WHERE id >= '" + Ulid.lowest(hour.toEpochMilli()) + "' AND id < '"
                        + Ulid.lowest(hour.toEpochMilli() + 3_600_000) + "')");
            }
            CliRun verify = run(
                    "verify",
                    "--slot",
                    SLOT.format(finished.get(0)),
                    "--slot",
                    SLOT.format(finished.get(1)),
                    "--slot",
                    SLOT.format(hour));
            assertThat(verify.exitCode()).as(verify.out() + verify.err()).isEqualTo(1);

            Future<CliRun> dashboard = serve(threads, port, () -> run("dashboard", "--port", Integer.toString(port)));
            JsonNode state = new ObjectMapper()
                    .readTree(MetricsIT.get(port, "/api/state").body());
            assertThat(state.path("heatmap").path("states").asText()).hasSize(HOURS);

            // the page as the browser drew it, DOM and screenshot in one load; a copy between two slots (the
            // manager hands the next one out shortly) has none leased for a moment: look again then
            Path png = Path.of("target/dashboard.png").toAbsolutePath();
            String[] dom = new String[1];
            Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> {
                Files.deleteIfExists(png);
                dom[0] = browse(chromium, port, "--dump-dom", "--screenshot=" + png, "--window-size=1280,900");
                Integer copying = legend(dom[0]).get("copying");
                return copying != null && copying > 0;
            });
            assertThat(dom[0]).contains("data-loaded=\"true\"");
            Map<String, Integer> legend = legend(dom[0]);
            assertThat(legend.get("verified")).as(dom[0]).isEqualTo(2);
            assertThat(legend.get("mismatch")).isEqualTo(1);
            assertThat(legend.get("copied")).isPositive();
            assertThat(legend.get("copying")).isPositive();
            assertThat(legend.get("waiting")).isPositive();
            assertThat(dom[0]).contains("IN_PROGRESS").contains(table + " \u2192 " + table);
            assertThat(copy.isDone())
                    .as("the copy still runs while the page shows it")
                    .isFalse();
            BufferedImage image = ImageIO.read(png.toFile());
            assertThat(image.getWidth()).isEqualTo(1280);
            assertThat(image.getHeight()).isEqualTo(900);

            assertThat(run("rate", "0").exitCode()).isZero(); // let the copy finish
            assertThat(copy.get(120, TimeUnit.SECONDS).exitCode()).isZero();
            dashboard.cancel(true);
        } finally {
            threads.shutdownNow();
            sql("DROP TABLE IF EXISTS " + table);
        }
    }

    /**
     * A table moved part by part: the page lists every part's route, each on its own line, with its applications'
     * shadow reads of the last hour.
     */
    @Test
    void aTableMovedPartByPartShowsEveryPartsRoute() throws Exception {
        String chromium = chromium();
        ExecutorService threads = Executors.newSingleThreadExecutor();
        int port = MetricsIT.freePort();
        try (UnifiedJedis redis = services.redis()) {
            RoutingTable routes = new RoutingTable(redis, new Keyspace(prefix));
            routes.create(table + "/pilot", RouteStatus.TARGET, 2);
            routes.create(table + "/rest", RouteStatus.SOURCE, 1);
            // the pilot's applications compared four reads in the last hour, one a mismatch
            routes.setShadowSample(table + "/pilot", 0.1);
            ShadowLog shadows = new ShadowLog(redis, new Keyspace(prefix));
            shadows.record(table + "/pilot", ShadowOutcome.MATCH, null, 3);
            shadows.record(
                    table + "/pilot",
                    ShadowOutcome.MISMATCH,
                    new ShadowMismatch("k", "N1:1", "S1:1", System.currentTimeMillis()),
                    1);
            Future<CliRun> dashboard = serve(threads, port, () -> run("dashboard", "--port", Integer.toString(port)));
            String dom = browse(chromium, port, "--dump-dom");
            assertThat(dom)
                    .contains("data-loaded=\"true\"")
                    .contains(table + "/pilot")
                    .contains("TARGET, epoch 2; shadow reads 75.00% match (3 of 4 in the last hour, sample 0.1)")
                    .contains(table + "/rest")
                    .contains("SOURCE, epoch 1");
            dashboard.cancel(true);
        } finally {
            threads.shutdownNow();
        }
    }

    /** A table slotted by key ranges: the page names its ranges (r000002 .. r000000) and counts them by state. */
    @Test
    void keyRangesAreNamedOnThePage() throws Exception {
        String chromium = chromium();
        ExecutorService threads = Executors.newSingleThreadExecutor();
        int port = MetricsIT.freePort();
        try {
            try (Connection pg = services.postgres();
                    Statement st = pg.createStatement()) {
                st.execute("CREATE TABLE " + table + " (id uuid PRIMARY KEY, body text)");
                st.execute("INSERT INTO " + table + " SELECT gen_random_uuid(), 'row ' || i FROM generate_series(1,"
                        + " 3000) i");
                st.execute("ANALYZE " + table);
            }
            String[] ranges = {"--set", "slots.timeFrom=none", "--set", "slots.rowsPerSlot=1000"};
            CliRun copy = run(concat(
                    new String[] {"copy", "--no-progress", "--no-concurrent-writers", "--create-table"}, ranges));
            assertThat(copy.exitCode()).as(copy.out() + copy.err()).isZero();
            CliRun verify = run(concat(new String[] {"verify", "--slot", "r000001"}, ranges));
            assertThat(verify.exitCode()).as(verify.out() + verify.err()).isZero();
            // the copy's last samples, ten minutes old: the copy has ended since, and no sample follows an ended copy
            long now = System.currentTimeMillis();
            try (UnifiedJedis redis = services.redis()) {
                String history = new Keyspace(prefix).run().history();
                redis.del(history);
                redis.lpush(history, (now - 610_000) + " 2000 660", (now - 600_000) + " 3000 670");
            }
            Future<CliRun> dashboard = serve(
                    threads,
                    port,
                    () -> run(concat(new String[] {"dashboard", "--port", Integer.toString(port)}, ranges)));
            String dom = browse(chromium, port, "--dump-dom");
            assertThat(dom)
                    .contains("data-loaded=\"true\"")
                    .contains("3 key ranges, r000002 .. r000000, the last first");
            // the rate caption says what the Copy panel says (nothing copies now), and how old its last sample is
            assertThat(dom)
                    .containsPattern("id=\"chart-rate-note\"[^>]*>now 0 rows/s, max 670 rows/s over 10s;"
                            + " last sample 10m \\d+s ago<");
            Map<String, Integer> legend = legend(dom);
            assertThat(legend.get("verified")).as(dom).isEqualTo(1);
            assertThat(legend.get("copied")).isEqualTo(2);
            dashboard.cancel(true);
        } finally {
            threads.shutdownNow();
            sql("DROP TABLE IF EXISTS " + table, "DROP TABLE IF EXISTS rebalance_ranges_" + table);
        }
    }

    /**
     * A copy Postgres coordinates, with no Redis anywhere: the page draws its slots, copy and verification in a
     * browser, and shows no tail, route or history rather than failing.
     */
    @Test
    void aPostgresCoordinatedCopyShowsInABrowser() throws Exception {
        String chromium = chromium();
        String schema = SharedServices.unique("dash_coord");
        List<String> flags = new ArrayList<>(CliRun.base(services, table, prefix));
        for (String s :
                List.of("mover.coordinator=postgres", "coordinator.schema=" + schema, "redis.url=redis://127.0.0.1:1"))
            flags.addAll(List.of("--set", s));
        ExecutorService threads = Executors.newSingleThreadExecutor();
        int port = MetricsIT.freePort();
        try {
            try (Connection pg = services.postgres()) {
                RoomEventsGenerator.create(pg, table, HOURS * 10, END, HOURS, 11);
            }
            CliRun copy = CliRun.of(flags, "copy", "--no-progress", "--no-concurrent-writers", "--create-table");
            assertThat(copy.exitCode()).as(copy.out() + copy.err()).isZero();
            CliRun verify = CliRun.of(flags, "verify", "--slot", SLOT.format(END.minusSeconds(3600)));
            assertThat(verify.exitCode()).as(verify.out() + verify.err()).isZero();
            Future<CliRun> dashboard =
                    serve(threads, port, () -> CliRun.of(flags, "dashboard", "--port", Integer.toString(port)));
            // the page as served, before any script runs, already says how the run stands
            assertThat(MetricsIT.get(port, "/").body())
                    .contains("class=\"badge FINISHED\">FINISHED<")
                    .contains("<dt>rows copied</dt><dd>" + String.format("%,d", HOURS * 10))
                    .doesNotContain(">loading<");
            String dom = browse(chromium, port, "--dump-dom");
            assertThat(dom)
                    .contains("data-loaded=\"true\"")
                    .contains("FINISHED")
                    .contains("no samples yet");
            Map<String, Integer> legend = legend(dom);
            assertThat(legend.get("verified")).as(dom).isEqualTo(1);
            assertThat(legend.get("copied")).isEqualTo(HOURS - 1);
            assertThat(legend.get("waiting")).isZero();
            dashboard.cancel(true);
        } finally {
            threads.shutdownNow();
            sql("DROP TABLE IF EXISTS " + table, "DROP SCHEMA IF EXISTS " + schema + " CASCADE");
        }
    }

    /**
     * An hour newer than the plan that only the tail wrote is verified by {@code verify --all} and counted by {@code
     * status}; the grid shows it too (it left it out: the grid was the plan's hours alone).
     */
    @Test
    void anHourOnlyTheTailWroteIsOnTheGrid() throws Exception {
        ExecutorService threads = Executors.newSingleThreadExecutor();
        int port = MetricsIT.freePort();
        try (UnifiedJedis redis = services.redis()) {
            try (Connection pg = services.postgres()) {
                RoomEventsGenerator.create(pg, table, HOURS * 10, END, HOURS, 11);
            }
            CliRun copy = run("copy", "--no-progress", "--no-concurrent-writers", "--create-table");
            assertThat(copy.exitCode()).as(copy.out() + copy.err()).isZero();
            // what a tail records once it has written a row of an hour after the plan's newest
            String later = SLOT.format(END); // the rows end just before END: the plan's newest hour is the one before
            redis.hset(new Keyspace(prefix).tail().changedSlots(), later, "0/16B3748");
            CliRun verify = run("verify", "--all");
            assertThat(verify.exitCode()).as(verify.out() + verify.err()).isZero();
            JsonNode status =
                    new ObjectMapper().readTree(run("status", "--json").out());
            int verified = status.path("verification").path("slotsVerified").asInt();
            assertThat(verified).isEqualTo(HOURS + 1);

            Future<CliRun> dashboard = serve(threads, port, () -> run("dashboard", "--port", Integer.toString(port)));
            JsonNode heatmap = new ObjectMapper()
                    .readTree(MetricsIT.get(port, "/api/state").body())
                    .path("heatmap");
            assertThat(heatmap.path("newest").asText()).isEqualTo(later);
            assertThat(heatmap.path("states").asText())
                    .as("one letter a slot, every one verified")
                    .hasSize(verified)
                    .matches("v+");
            dashboard.cancel(true);
        } finally {
            threads.shutdownNow();
            sql("DROP TABLE IF EXISTS " + table);
        }
    }

    /** Starts {@code dashboard} on a thread of {@code threads} and waits until it answers on {@code port}. */
    private static Future<CliRun> serve(ExecutorService threads, int port, Callable<CliRun> dashboard) {
        Future<CliRun> running = threads.submit(dashboard);
        Awaitility.await()
                .atMost(Duration.ofSeconds(30))
                .ignoreExceptions()
                .until(() -> MetricsIT.get(port, "/api/state").statusCode() == 200);
        return running;
    }

    private void sql(String... statements) throws Exception {
        try (Connection pg = services.postgres();
                Statement st = pg.createStatement()) {
            for (String s : statements) st.execute(s);
        }
    }

    private static String[] concat(String[] a, String[] b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /** The legend's count of slots per state, as the page's script wrote it into the DOM. */
    private static Map<String, Integer> legend(String dom) {
        Map<String, Integer> counts = new HashMap<>();
        Matcher m =
                Pattern.compile("data-state=\"(\\w+)\" data-count=\"(\\d+)\"").matcher(dom);
        while (m.find()) counts.put(m.group(1), Integer.parseInt(m.group(2)));
        return counts;
    }

    /** Runs headless Chromium on the page, with the flags a closed network needs, and returns what it printed. */
    private static String browse(String chromium, int port, String... what) throws Exception {
        Path profile = Files.createTempDirectory("chromium");
        List<String> cmd = new ArrayList<>(List.of(
                chromium,
                "--headless",
                "--no-sandbox", // as root
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                "--user-data-dir=" + profile,
                "--virtual-time-budget=6000")); // the script's first fetches and draws run before the dump
        cmd.addAll(List.of(what));
        cmd.add("http://127.0.0.1:" + port + "/");
        Process p = new ProcessBuilder(cmd)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(90, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        return out;
    }

    /** Debian's Chromium, installed by the project's script when this machine lacks it (never skipped). */
    private static String chromium() throws Exception {
        File bin = new File("/usr/bin/chromium");
        if (!bin.canExecute()) {
            Process p = new ProcessBuilder("bash", "../scripts/chromium.sh")
                    .inheritIO()
                    .start();
            assertThat(p.waitFor(600, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).as("scripts/chromium.sh").isZero();
        }
        assertThat(bin.canExecute())
                .as("/usr/bin/chromium after scripts/chromium.sh")
                .isTrue();
        return bin.getPath();
    }
}
