package io.rebalance.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.core.config.ConfigLoader;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.DynamoClients;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.verifier.Fingerprint;
import io.rebalance.verifier.InFlight;
import io.rebalance.verifier.SlotResult;
import io.rebalance.verifier.Verifier;
import io.rebalance.verifier.VerifyOptions;
import java.io.File;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * What a whole verification costs the source, measured from outside: the CPU every Postgres process spent (ended
 * backends and parallel workers included, from /proc) while each of these ran, on the same rows, medians of the runs:
 *
 * <ul>
 *   <li><b>md5 of every row</b> (the baseline): one query summing {@code md5(t::text)} over the whole table;
 *   <li><b>fingerprints alone</b>: the fingerprint queries {@code verify} sends, one per span of hours, nothing else;
 *   <li><b>verify --all</b>: the command as a user runs it (the launcher, a process of its own), every statement
 *       included: what it reads to choose the slots, counts, surveys, fingerprints, pinpoints;
 *   <li><b>verify --slot</b>: the command on a range of a day's slots, against the fingerprints of that day alone;
 *   <li><b>the cutover's verification</b>: every slot verified by the verifier the cutover builds, in this process.
 * </ul>
 *
 * With {@code pg_stat_statements} loaded (bench/verify-all.sh loads it), the statements {@code verify --all} sent are
 * listed after each of its runs with their calls, rows, execution time, the buffers they touched and the temporary
 * blocks they wrote and read (a sort spilled to disk): the breakdown by statement. Arguments: endpoint rows hours reps threads launcher.
 */
public final class VerifyAllBenchmark {
    private static final ObjectMapper JSON = new ObjectMapper();
    static final String TABLE = VerifyBenchmark.TABLE;

    static final String TARGET = "bench_verify_all";

    public static void main(String[] args) throws Exception {
        BenchArgs a = BenchArgs.of(args);
        MigrationConfig config = new ConfigLoader(System.getenv())
                .load(null, Map.of("source.table", TABLE, "target.table", TARGET, "target.endpoint", a.endpoint()));

        List<Slot> slots = VerifyBenchmark.hoursBefore(VerifyBenchmark.END, a.hours());
        List<Slot> day = slots.subList(0, Math.min(24, slots.size()));
        String dayRange = day.get(day.size() - 1) + ".." + day.get(0);

        try (DynamoDbClient dynamo = DynamoClients.create(config.target(), a.endpoint(), a.threads() * 4, List.of())) {
            SourceTable source = VerifyBenchmark.prepare(config, dynamo, a.endpoint(), a.rows(), a.hours());
            String t = config.target().table();

            Verifier verifier = new Verifier(config, source, dynamo, InFlight.settle(Duration.ZERO));
            List<List<Slot>> spans = verifier.spans(slots, a.threads());
            List<List<Slot>> daySpans = verifier.spans(day, a.threads());
            boolean statements = Statements.loaded(config);
            Map<String, Runnable> phases = new LinkedHashMap<>();
            Map<String, List<Double>> cpu = new LinkedHashMap<>();
            phases.put("md5 of every row (one query)", unchecked(() -> md5(config, source, a.rows())));
            phases.put(
                    "fingerprints alone (" + spans.size() + " span queries)",
                    unchecked(() -> fingerprints(verifier, spans, a.threads(), a.rows())));
            phases.put("verify --all", unchecked(() -> {
                if (statements) Statements.reset(config);
                command(a.launcher(), a.endpoint(), a.threads(), a.hours(), "--all");
                if (statements) Statements.print(config, "verify --all");
            }));
            phases.put(
                    "fingerprints of " + day.size() + " hours alone",
                    unchecked(() -> fingerprints(verifier, daySpans, a.threads(), -1)));
            phases.put(
                    "verify --slot " + dayRange,
                    unchecked(() -> command(a.launcher(), a.endpoint(), a.threads(), day.size(), "--slot", dayRange)));
            phases.put(
                    "the cutover's verification, every slot",
                    unchecked(() -> cutoverVerification(config, source, dynamo, slots, a.threads())));
            phases.keySet().forEach(k -> cpu.put(k, new ArrayList<>()));
            if (!statements) System.out.println("pg_stat_statements is not loaded: no breakdown by statement");
            // warm-up, untimed: the table's pages in the cache and every JIT, for every phase alike
            for (Runnable phase : phases.values()) phase.run();
            List<String> names = new ArrayList<>(phases.keySet());
            for (int rep = 1; rep <= a.reps(); rep++) {
                System.out.printf("run %d%n", rep);
                for (int i = 0; i < names.size(); i++) {
                    // each run starts at another phase, so none always follows the same one
                    String name = names.get((i + rep - 1) % names.size());
                    Set<Long> running = CpuMeter.postgresPids();
                    CpuMeter.Sample c0 = CpuMeter.sample();
                    long w0 = System.nanoTime();
                    phases.get(name).run();
                    CpuMeter.awaitEnded(running); // every backend it opened reaped, its time with the postmaster
                    double used = CpuMeter.seconds(c0, CpuMeter.sample(), "Postgres");
                    cpu.get(name).add(used);
                    System.out.printf(
                            "  %-48s Postgres CPU %6.2f s  (%.1f s wall)%n",
                            name, used, (System.nanoTime() - w0) / 1e9);
                }
            }
            System.out.println();
            System.out.printf(
                    "rows %,d over %d hours; %d runs; %d threads; Postgres CPU, medians:%n",
                    a.rows(), a.hours(), a.reps(), a.threads());
            double md5 = CopyBenchmark.median(cpu.get(names.get(0)));
            double prints = CopyBenchmark.median(cpu.get(names.get(1)));
            double all = CopyBenchmark.median(cpu.get(names.get(2)));
            double dayPrints = CopyBenchmark.median(cpu.get(names.get(3)));
            double slot = CopyBenchmark.median(cpu.get(names.get(4)));
            double cutover = CopyBenchmark.median(cpu.get(names.get(5)));
            for (String name : names)
                System.out.printf("  %-48s %6.2f s   %s%n", name, CopyBenchmark.median(cpu.get(name)), cpu.get(name));
            System.out.printf("  fingerprints alone / md5 = %.2fx%n", prints / md5);
            System.out.printf("  verify --all / md5 = %.2fx   (goal <= 1.3x)%n", all / md5);
            System.out.printf("  verify --all / fingerprints alone = %.2fx%n", all / prints);
            System.out.printf("  verify --slot / the same hours' fingerprints alone = %.2fx%n", slot / dayPrints);
            System.out.printf("  the cutover's verification / fingerprints alone = %.2fx%n", cutover / prints);
            dynamo.deleteTable(b -> b.tableName(t));
        }
    }

    /** The cheapest exact hash of every row, in one query: the floor a whole-table proof is compared to. */
    private static void md5(MigrationConfig config, SourceTable source, int rows) throws Exception {
        try (Connection c = new SourceSession(config.source()).open();
                Statement st = c.createStatement();
                ResultSet rs =
                        st.executeQuery("SELECT count(*), sum(('x' || substr(md5(t::text), 1, 16))::bit(64)::int8)"
                                + " FROM " + source.name() + " t")) {
            rs.next();
            if (rs.getLong(1) != rows) throw new IllegalStateException("md5 counted " + rs.getLong(1) + " rows");
        }
    }

    private static void fingerprints(Verifier verifier, List<List<Slot>> spans, int threads, int rows)
            throws Exception {
        long counted = VerifyBenchmark.perSpan(spans, threads, verifier::open, verifier::postgresSide).values().stream()
                .mapToLong(Fingerprint::count)
                .sum();
        if (rows >= 0 && counted != rows) throw new IllegalStateException("fingerprints counted " + counted + " rows");
    }

    /** The verifier the cutover builds (a slot that differs is settled by rows), every slot, nothing repaired. */
    private static void cutoverVerification(
            MigrationConfig config, SourceTable source, DynamoDbClient dynamo, List<Slot> slots, int threads)
            throws Exception {
        Verifier cutover = new Verifier(
                config,
                source,
                dynamo,
                VerifyOptions.of(InFlight.settle(Duration.ZERO)).settlingByRows());
        for (SlotResult r : cutover.verify(slots, threads, false, x -> {}))
            if (r.verdict() != SlotResult.Verdict.MATCH)
                throw new IllegalStateException("the cutover's verification found " + r.verdict() + " in " + r.slot());
    }

    /** {@code rebalance verify} as a user runs it; every slot must match. */
    private static void command(String launcher, String endpoint, int threads, int slots, String... which)
            throws Exception {
        List<String> cmd = new ArrayList<>(List.of(launcher, "verify"));
        cmd.addAll(List.of(which));
        cmd.addAll(List.of(
                "--json",
                "--parallel",
                Integer.toString(threads),
                "--set",
                "source.table=" + TABLE,
                "--set",
                "target.table=" + TARGET,
                "--set",
                "target.endpoint=" + endpoint,
                "--set",
                "redis.prefix=bench:verify-all:" + System.nanoTime() + ":"));
        File out = new File("bench/results/verify-all.out");
        Process p = new ProcessBuilder(cmd)
                .redirectOutput(out)
                .redirectError(new File("bench/results/verify-all.err"))
                .start();
        if (p.waitFor() != 0)
            throw new IllegalStateException(
                    "rebalance verify exited " + p.exitValue() + "; see bench/results/verify-all.*");
        JsonNode json = JSON.readTree(Files.readString(out.toPath()));
        int matched = json.path("counts").path("MATCH").asInt(-1);
        if (!"MATCH".equals(json.path("result").asText()) || matched < slots)
            throw new IllegalStateException("rebalance verify: " + json.path("result") + ", " + json.path("counts")
                    + " of " + slots + " slots");
    }

    interface Work {
        void run() throws Exception;
    }

    private static Runnable unchecked(Work w) {
        return () -> {
            try {
                w.run();
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        };
    }

    /** The statements one command sent, from {@code pg_stat_statements}. */
    static final class Statements {
        static boolean loaded(MigrationConfig config) {
            try (Connection c = new SourceSession(config.source()).open();
                    Statement st = c.createStatement()) {
                st.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
                st.executeQuery("SELECT 1 FROM pg_stat_statements LIMIT 1").close();
                return true;
            } catch (Exception e) {
                return false; // not in shared_preload_libraries
            }
        }

        static void reset(MigrationConfig config) throws Exception {
            try (Connection c = new SourceSession(config.source()).open();
                    Statement st = c.createStatement()) {
                st.execute("SELECT pg_stat_statements_reset()");
            }
        }

        static void print(MigrationConfig config, String what) throws Exception {
            try (Connection c = new SourceSession(config.source()).open();
                    Statement st = c.createStatement();
                    ResultSet rs =
                            st.executeQuery("SELECT calls, rows, total_exec_time, shared_blks_hit + shared_blks_read,"
                                    + " temp_blks_read + temp_blks_written, regexp_replace(query, '\\s+', ' ', 'g') FROM pg_stat_statements"
                                    + " WHERE query NOT LIKE '%pg_stat_statements%' ORDER BY total_exec_time DESC")) {
                double total = 0;
                List<String> lines = new ArrayList<>();
                while (rs.next()) {
                    total += rs.getDouble(3);
                    String q = rs.getString(6);
                    lines.add(String.format(
                            "    %6d calls %9d rows %9.0f ms %9d buffers %8d temp blocks  %s",
                            rs.getLong(1),
                            rs.getLong(2),
                            rs.getDouble(3),
                            rs.getLong(4),
                            rs.getLong(5),
                            q.length() > 160 ? q.substring(0, 160) + "..." : q));
                }
                System.out.printf(
                        "  statements of %s (%d kinds, %.0f ms executing in all):%n", what, lines.size(), total);
                lines.stream().limit(12).forEach(System.out::println);
            }
        }
    }

    private VerifyAllBenchmark() {}
}
