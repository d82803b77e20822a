package io.rebalance.bench;

import com.sun.management.OperatingSystemMXBean;
import io.rebalance.core.codec.RowCodec;
import io.rebalance.core.codec.SourceRow;
import io.rebalance.core.config.ConfigLoader;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.DynamoClients;
import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.dynamo.TargetTable;
import io.rebalance.core.slot.KeyType;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.local.RoomEventsGenerator;
import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemResponse;
import software.amazon.awssdk.services.dynamodb.model.PutRequest;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * Copy throughput, three ways, on the same generated rows and the same DynamoDB Local, in one run, each into a
 * fresh table, repeated and reported as medians:
 * <ul>
 *   <li><b>naive</b>: the seed note's single loop: one thread pages the table from Postgres (1000 rows, keyset,
 *       newest first) and writes each page with BatchWriteItem of 25, one call after another;
 *   <li><b>copy</b>: {@code rebalance copy} as one separate process started by {@code bin/rebalance} with a 512 MB
 *       heap and default settings (but the endpoint and the worker count), timed from process start to exit;
 *   <li><b>metrics</b>: the same copy with {@code --metrics-port}, scraped every second (a Prometheus scrapes every
 *       10 to 60 s), run next to each plain copy, before it in odd runs and after it in even ones, so the two
 *       interleave; with the CPU seconds each copy process spent per row;
 *   <li><b>ceiling</b>: BatchWriteItem of 25 with items built beforehand (no Postgres, no Redis), on as many
 *       threads as the copy has workers: what DynamoDB Local itself can take here;
 *   <li><b>refused</b>: {@code rebalance copy} as above, of a copy of the table in which 1% (or refusedPercent) of
 *       the rows hold a json
 *       number DynamoDB cannot hold (each is listed as refused, the others written; the copy exits 21), reported
 *       as the table's rows per second.
 * </ul>
 * Arguments: endpoint rows hours reps workers launcher (bin/rebalance) [refusedPercent, default 1].
 */
public final class CopyBenchmark {
    private static final String REFUSED_TABLE = "bench_room_events_refused";

    public static void main(String[] args) throws Exception {
        BenchArgs a = BenchArgs.of(args);
        int refusedPercent = Integer.parseInt(a.extra(6, "1"));
        String table = "bench_room_events";
        Map<String, String> base = Map.of("source.table", table, "target.endpoint", a.endpoint());
        MigrationConfig config = new ConfigLoader(System.getenv()).load(null, base);

        System.out.printf(
                "generating %,d rows over %d hours in %s, and in %s with %d%% refused%n",
                a.rows(), a.hours(), table, REFUSED_TABLE, refusedPercent);
        int refusedRows;
        try (Connection c = new SourceSession(config.source()).open();
                Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS " + table);
            RoomEventsGenerator.create(c, table, a.rows(), Instant.parse("2024-10-20T00:00:00Z"), a.hours(), 3);
            st.execute("DROP TABLE IF EXISTS " + REFUSED_TABLE);
            RoomEventsGenerator.create(c, REFUSED_TABLE, a.rows(), Instant.parse("2024-10-20T00:00:00Z"), a.hours(), 3);
            refusedRows = st.executeUpdate("UPDATE " + REFUSED_TABLE + " SET data = '{\"x\": 1.5e300}'::jsonb"
                    + " WHERE abs(hashtext(id)) % 100 < " + refusedPercent); // beyond DynamoDB's range: refused
        }
        SourceTable source;
        try (Connection c = new SourceSession(config.source()).open()) {
            source = SourceTable.inspect(c, config);
        }
        RowCodec codec = source.codec(config.target());

        List<Double> naive = new ArrayList<>();
        List<Double> copy = new ArrayList<>();
        List<Double> metrics = new ArrayList<>();
        List<Double> ceiling = new ArrayList<>();
        List<Double> refused = new ArrayList<>();
        try (DynamoDbClient dynamo = DynamoClients.create(config.target(), a.endpoint(), a.threads() * 2, List.of())) {
            List<Map<String, AttributeValue>> items = allItems(config, codec);
            for (int rep = 1; rep <= a.reps(); rep++) {
                naive.add(measure(
                        "naive",
                        rep,
                        a.rows(),
                        a.rows(),
                        dynamo,
                        t -> naiveLoop(config, codec, dynamo, "bench_room_events", t)));
                // metrics on and off back to back, the order alternating, on first in odd runs (the first copy
                // after the naive loop measured slower, whichever it was: this leans against metrics on)
                Phase off = t -> rebalanceCopy(a.launcher(), a.endpoint(), table, t, a.threads(), 0);
                Phase on = t -> scrapedCopy(a.launcher(), a.endpoint(), table, t, a.threads());
                if (rep % 2 == 1) metrics.add(measure("metrics", rep, a.rows(), a.rows(), dynamo, on));
                copy.add(measure("copy", rep, a.rows(), a.rows(), dynamo, off));
                if (rep % 2 == 0) metrics.add(measure("metrics", rep, a.rows(), a.rows(), dynamo, on));
                ceiling.add(measure(
                        "ceiling",
                        rep,
                        a.rows(),
                        a.rows(),
                        dynamo,
                        t -> rawBatchWrites(items, dynamo, t, a.threads())));
                refused.add(measure(
                        "refused",
                        rep,
                        a.rows(),
                        a.rows() - refusedRows,
                        dynamo,
                        t -> rebalanceCopy(a.launcher(), a.endpoint(), REFUSED_TABLE, t, a.threads(), 21)));
            }
        }
        double n = median(naive);
        double c = median(copy);
        double x = median(ceiling);
        double r = median(refused);
        System.out.println();
        System.out.printf("rows %,d over %d slots; %d runs each; medians (rows/s):%n", a.rows(), a.hours(), a.reps());
        System.out.printf("  naive single loop (1 thread)      %,10.0f   %s%n", n, naive);
        System.out.printf("  rebalance copy (1 process, %2d w) %,10.0f   %s%n", a.threads(), c, copy);
        System.out.printf("  raw BatchWriteItem ceiling (%2d t) %,10.0f   %s%n", a.threads(), x, ceiling);
        System.out.printf(
                "  rebalance copy, %,d rows (%d%%) refused %,10.0f   %s (the table's rows/s)%n",
                refusedRows, refusedPercent, r, refused);
        System.out.printf("  copy / naive   = %.2fx   (goal >= 2x)%n", c / n);
        System.out.printf(
                "  refused / copy = %.0f%%    (goal >= 90%% with 1%% refused); the refused copy took %.2fx the"
                        + " clean copy's time (goal <= 2x)%n",
                100 * r / c, c / r);
        System.out.printf("  copy / ceiling = %.0f%%    (goal >= 85%%; >= 95%% at 1,000,000 rows)%n", 100 * c / x);
        double m = median(metrics);
        System.out.printf(
                "  metrics on: %,.0f rows/s %s against off: %,.0f rows/s %s: on / off = %.3f; off's spread"
                        + " %.1f%% of its median, on - off = %.1f%% (goal: within the spread)%n",
                m, metrics, c, copy, m / c, 100 * (max(copy) - min(copy)) / c, 100 * (m - c) / c);
        double copyCpu = 1e6 * median(CPU.get(false)) / a.rows();
        double naiveCpu = 1e6 * median(SELF_CPU.get("naive")) / a.rows();
        System.out.printf(
                "  copy process CPU per row: off %.2f us, on %.2f us (medians)%n",
                copyCpu, 1e6 * median(CPU.get(true)) / a.rows());
        System.out.printf(
                "  CPU per row of the raw loops (this JVM, warm): naive %.2f us, ceiling %.2f us; copy / naive = %.2fx"
                        + "   (goal <= 1.5x)%n",
                naiveCpu, 1e6 * median(SELF_CPU.get("ceiling")) / a.rows(), copyCpu / naiveCpu);
    }

    interface Phase {
        void run(String table) throws Exception;
    }

    private static double measure(String name, int rep, int rows, int items, DynamoDbClient dynamo, Phase phase)
            throws Exception {
        String t = "bench_" + name + "_" + rep;
        TargetTable.create(dynamo, t, "id", KeyType.TEXT, new SlotIndex("by_slot", "_slot"));
        long start = System.nanoTime();
        long cpuBefore = OWN_CPU.getProcessCpuTime();
        phase.run(t);
        double seconds = (System.nanoTime() - start) / 1e9;
        // this JVM's CPU: the naive loop's and the ceiling's own (a copy runs in a process of its own, read apart)
        SELF_CPU.computeIfAbsent(name, k -> new ArrayList<>()).add((OWN_CPU.getProcessCpuTime() - cpuBefore) / 1e9);
        long count = TargetTable.countItems(dynamo, t, 4);
        dynamo.deleteTable(b -> b.tableName(t)); // frees DynamoDB Local's memory for the next phase
        if (count != items) throw new IllegalStateException(name + " wrote " + count + " items, not " + items);
        double rate = rows / seconds;
        System.out.printf("  %-8s run %d: %,d rows in %6.1f s = %,8.0f rows/s%n", name, rep, rows, seconds, rate);
        return rate;
    }

    /** The design note's naive script: page, then write the page in batches of 25, all on one thread. */
    /** The seed note's single loop: {@code source}'s rows, 1,000 a page, into {@code table} 25 a call. */
    static void naiveLoop(MigrationConfig config, RowCodec codec, DynamoDbClient dynamo, String source, String table)
            throws Exception {
        try (Connection c = new SourceSession(config.source()).open()) {
            String sql = "SELECT id::text, room_id::text, kind, data::text, created_at::text, seq::text FROM " + source
                    + " WHERE id < ? ORDER BY id DESC LIMIT 1000";
            String last = "\uFFFF";
            while (true) {
                List<Map<String, AttributeValue>> page = new ArrayList<>(1000);
                try (PreparedStatement ps = c.prepareStatement(sql)) {
                    ps.setString(1, last);
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            Object[] v = new Object[6];
                            for (int i = 0; i < 6; i++) v[i] = rs.getString(i + 1);
                            page.add(codec.encode(new SourceRow((String) v[0], v)));
                            last = (String) v[0];
                        }
                    }
                }
                if (page.isEmpty()) return;
                for (int i = 0; i < page.size(); i += 25)
                    writeBatch(dynamo, table, page.subList(i, Math.min(page.size(), i + 25)));
            }
        }
    }

    /** CPU seconds of each copy process, by metrics off (false) and on (true). */
    private static final Map<Boolean, List<Double>> CPU = Map.of(false, new ArrayList<>(), true, new ArrayList<>());
    /** CPU seconds this JVM spent in each phase, by phase name. */
    private static final Map<String, List<Double>> SELF_CPU = new HashMap<>();

    private static final OperatingSystemMXBean OWN_CPU =
            (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    private static void rebalanceCopy(
            String launcher, String endpoint, String source, String table, int workers, int exit) throws Exception {
        rebalanceCopy(launcher, endpoint, source, table, workers, exit, -1);
    }

    /** The copy with its metrics endpoint on, scraped every second from this process while it runs. */
    private static void scrapedCopy(String launcher, String endpoint, String source, String table, int workers)
            throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        HttpClient http = HttpClient.newHttpClient();
        HttpRequest scrape = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                .build();
        AtomicInteger scrapes = new AtomicInteger();
        // a scrape a second, as an eager Prometheus would (they scrape every 10 to 60 s)
        ScheduledExecutorService scraper = Executors.newSingleThreadScheduledExecutor();
        scraper.scheduleWithFixedDelay(
                () -> {
                    try {
                        http.send(scrape, HttpResponse.BodyHandlers.discarding());
                        scrapes.incrementAndGet();
                    } catch (IOException notYet) {
                        // the process is starting, or has ended
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                },
                0,
                1,
                TimeUnit.SECONDS);
        try {
            rebalanceCopy(launcher, endpoint, source, table, workers, 0, port);
        } finally {
            scraper.shutdownNow();
            scraper.awaitTermination(10, TimeUnit.SECONDS);
        }
        if (scrapes.get() == 0) throw new IllegalStateException("no scrape of the copy's metrics answered");
    }

    /** {@code rebalance copy} of {@code source} into {@code table}, as the benchmarks run it. */
    static List<String> copyCommand(
            String launcher, String endpoint, String source, String table, String prefix, int workers) {
        return new ArrayList<>(Arrays.asList(
                launcher,
                "copy",
                "--no-progress",
                "--no-concurrent-writers", // the bench's source is not written while it copies
                "--set",
                "source.table=" + source,
                "--set",
                "target.table=" + table,
                "--set",
                "target.endpoint=" + endpoint,
                "--set",
                "redis.prefix=" + prefix,
                "--set",
                "mover.workers=" + workers));
    }

    /**
     * @param exit what the copy must exit with: 0, or 21 when rows are refused
     * @param metricsPort the port of its metrics endpoint, -1 for none
     */
    private static void rebalanceCopy(
            String launcher, String endpoint, String source, String table, int workers, int exit, int metricsPort)
            throws Exception {
        String prefix = "bench:" + table + ":" + System.nanoTime() + ":";
        // as a user runs it: the launcher (with its JVM flags), a 512 MB heap
        List<String> cmd = copyCommand(launcher, endpoint, source, table, prefix, workers);
        if (metricsPort >= 0) cmd.addAll(List.of("--metrics-port", Integer.toString(metricsPort)));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        // COPY_JAVA_OPTS adds flags to the copy's JVM (a profiler's, say) without touching the measured defaults
        pb.environment()
                .put("REBALANCE_JAVA_OPTS", ("-Xmx512m " + System.getenv().getOrDefault("COPY_JAVA_OPTS", "")).trim());
        Process p = pb.redirectErrorStream(true)
                .redirectOutput(new File("bench/results/" + table + ".log"))
                .start();
        double cpu = 0; // the process's user + system seconds, last read just before it exits
        while (!p.waitFor(200, TimeUnit.MILLISECONDS)) cpu = Math.max(cpu, cpuSeconds(p.pid()));
        if (exit == 0) CPU.get(metricsPort >= 0).add(cpu);
        if (p.exitValue() != exit)
            throw new IllegalStateException(
                    "rebalance copy exited " + p.exitValue() + "; see bench/results/" + table + ".log");
    }

    static void rawBatchWrites(
            List<Map<String, AttributeValue>> items, DynamoDbClient dynamo, String table, int threads)
            throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        AtomicInteger next = new AtomicInteger();
        List<Future<?>> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            all.add(pool.submit(() -> {
                for (int i = next.getAndAdd(25); i < items.size(); i = next.getAndAdd(25)) {
                    writeBatch(dynamo, table, items.subList(i, Math.min(items.size(), i + 25)));
                }
                return null;
            }));
        }
        for (Future<?> f : all) f.get();
        pool.shutdown();
    }

    private static void writeBatch(DynamoDbClient dynamo, String table, List<Map<String, AttributeValue>> batch) {
        List<WriteRequest> pending = new ArrayList<>(batch.size());
        for (Map<String, AttributeValue> item : batch)
            pending.add(WriteRequest.builder()
                    .putRequest(PutRequest.builder().item(item).build())
                    .build());
        while (!pending.isEmpty()) {
            List<WriteRequest> send = pending;
            BatchWriteItemResponse r = dynamo.batchWriteItem(b -> b.requestItems(Map.of(table, send)));
            pending = r.hasUnprocessedItems() ? r.unprocessedItems().getOrDefault(table, List.of()) : List.of();
        }
    }

    static List<Map<String, AttributeValue>> allItems(MigrationConfig config, RowCodec codec) throws Exception {
        List<Map<String, AttributeValue>> items = new ArrayList<>();
        try (Connection c = new SourceSession(config.source()).open();
                Statement st = c.createStatement()) {
            c.setAutoCommit(false);
            st.setFetchSize(10_000);
            try (ResultSet rs =
                    st.executeQuery("SELECT id::text, room_id::text, kind, data::text, created_at::text, seq::text"
                            + " FROM bench_room_events")) {
                while (rs.next()) {
                    Object[] v = new Object[6];
                    for (int i = 0; i < 6; i++) v[i] = rs.getString(i + 1);
                    items.add(codec.encode(new SourceRow((String) v[0], v)));
                }
            }
        }
        return items;
    }

    static double cpuSeconds(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0; // utime, stime in USER_HZ ticks
        } catch (IOException | RuntimeException gone) {
            return 0;
        }
    }

    private static double min(List<Double> xs) {
        return xs.stream().mapToDouble(Double::doubleValue).min().orElse(0);
    }

    private static double max(List<Double> xs) {
        return xs.stream().mapToDouble(Double::doubleValue).max().orElse(0);
    }

    static double median(List<Double> xs) {
        List<Double> s = new ArrayList<>(xs);
        s.sort(Double::compare);
        int m = s.size() / 2;
        return s.size() % 2 == 1 ? s.get(m) : (s.get(m - 1) + s.get(m)) / 2;
    }

    private CopyBenchmark() {}
}
