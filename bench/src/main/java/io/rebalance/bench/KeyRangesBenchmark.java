package io.rebalance.bench;

import io.rebalance.core.config.ConfigLoader;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.DynamoClients;
import io.rebalance.core.source.SourceSession;
import io.rebalance.local.RoomEventsGenerator;
import java.io.File;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Key ranges against hours, in one run: the same rows keyed once by time-ordered ids (ULID text, hourly slots) and once
 * by random uuids ({@code slots.timeFrom: none}, ranges of {@code rowsPerSlot} rows: the product's default, 0, or
 * {@code hour} for as many ranges as there are hours), each copied by {@code rebalance copy} (one process) into a
 * new DynamoDB table and verified by {@code rebalance verify --all}, the order of the two alternating from run to run.
 * Wall time of each command as a user runs it (the launcher, its JVM flags); medians and the ratios uuid / time.
 *
 * <p>Args: endpoint rows hours reps workers launcher [rowsPerSlot=0|N|hour].
 */
public final class KeyRangesBenchmark {
    private static final String TIME = "bench_keys_time";
    private static final String UUID = "bench_keys_uuid";

    private KeyRangesBenchmark() {}

    public static void main(String[] args) throws Exception {
        BenchArgs a = BenchArgs.of(args);
        String perSlot = a.extra(6, "0"); // 0: the product's default
        long rowsPerSlot = perSlot.equals("hour") ? Math.max(1_000, a.rows() / a.hours()) : Long.parseLong(perSlot);
        MigrationConfig config = new ConfigLoader(System.getenv()).load(null, Map.of("target.endpoint", a.endpoint()));
        System.out.printf(
                "generating %,d rows over %d hours in %s, and the same rows keyed by random uuids in %s%n",
                a.rows(), a.hours(), TIME, UUID);
        try (Connection c = new SourceSession(config.source()).open();
                Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS " + TIME);
            st.execute("DROP TABLE IF EXISTS " + UUID);
            st.execute("DROP TABLE IF EXISTS rebalance_ranges_" + UUID);
            RoomEventsGenerator.create(c, TIME, a.rows(), Instant.parse("2024-10-20T00:00:00Z"), a.hours(), 3);
            st.execute("CREATE TABLE " + UUID + " AS SELECT gen_random_uuid() AS id, room_id, kind, data, created_at,"
                    + " seq FROM " + TIME);
            st.execute("ALTER TABLE " + UUID + " ADD PRIMARY KEY (id)");
            st.execute("VACUUM ANALYZE " + TIME);
            st.execute("VACUUM ANALYZE " + UUID);
        }
        Map<String, List<Double>> rates = new TreeMap<>();
        try (DynamoDbClient dynamo = DynamoClients.create(config.target(), a.endpoint(), 4, List.of())) {
            for (int rep = 1; rep <= a.reps(); rep++) {
                List<String> order = rep % 2 == 1 ? List.of(TIME, UUID) : List.of(UUID, TIME);
                for (String source : order) {
                    String kind = source.equals(TIME) ? "time" : "uuid";
                    String target = source + "_" + rep;
                    List<String> settings = settings(
                            source,
                            target,
                            a.endpoint(),
                            a.threads(),
                            "bench:keys:" + target + ":" + System.nanoTime() + ":",
                            rowsPerSlot);
                    double copy = run(a.launcher(), "copy", settings, target, a.rows());
                    double verify = run(a.launcher(), "verify", settings, target, a.rows());
                    rates.computeIfAbsent(kind + " copy", k -> new ArrayList<>())
                            .add(copy);
                    rates.computeIfAbsent(kind + " verify", k -> new ArrayList<>())
                            .add(verify);
                    System.out.printf(
                            "  %s run %d: copy %,8.0f rows/s, verify --all %,8.0f rows/s%n", kind, rep, copy, verify);
                    dynamo.deleteTable(b -> b.tableName(target));
                }
            }
        }
        System.out.println();
        System.out.printf(
                "rows %,d; %d hours; key ranges of %s rows; %d runs each; medians (rows/s):%n",
                a.rows(),
                a.hours(),
                rowsPerSlot == 0 ? "the default (0: 64 ranges here)" : String.format("%,d", rowsPerSlot),
                a.reps());
        rates.forEach((k, v) -> System.out.printf("  %-12s %,10.0f   %s%n", k, CopyBenchmark.median(v), v));
        for (String phase : List.of("copy", "verify")) {
            double time = CopyBenchmark.median(rates.get("time " + phase));
            double uuid = CopyBenchmark.median(rates.get("uuid " + phase));
            System.out.printf("  uuid / time %-6s = %.2fx   (goal >= 0.9x)%n", phase, uuid / time);
        }
    }

    private static List<String> settings(
            String source, String target, String endpoint, int workers, String prefix, long rowsPerSlot) {
        List<String> out = new ArrayList<>();
        for (String kv : List.of(
                "source.table=" + source,
                "target.table=" + target,
                "target.endpoint=" + endpoint,
                "redis.prefix=" + prefix,
                "mover.workers=" + workers)) {
            out.add("--set");
            out.add(kv);
        }
        if (source.equals(UUID))
            out.addAll(List.of("--set", "slots.timeFrom=none", "--set", "slots.rowsPerSlot=" + rowsPerSlot));
        return out;
    }

    /** Runs one command to its end; @return the table's rows over its wall time */
    private static double run(String launcher, String command, List<String> settings, String target, int rows)
            throws Exception {
        List<String> cmd = new ArrayList<>(List.of(launcher, command));
        if (command.equals("copy")) cmd.addAll(List.of("--create-table", "--no-progress", "--no-concurrent-writers"));
        else cmd.add("--all");
        cmd.addAll(settings);
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("REBALANCE_JAVA_OPTS", "-Xmx512m");
        long start = System.nanoTime();
        Process p = pb.redirectErrorStream(true)
                .redirectOutput(new File("bench/results/" + target + "-" + command + ".log"))
                .start();
        if (p.waitFor() != 0)
            throw new IllegalStateException("rebalance " + command + " exited " + p.exitValue() + "; see bench/results/"
                    + target + "-" + command + ".log");
        return rows / ((System.nanoTime() - start) / 1e9);
    }
}
