package io.rebalance.bench;

import io.rebalance.core.config.ConfigLoader;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.DynamoClients;
import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.dynamo.TargetTable;
import io.rebalance.core.slot.KeyType;
import java.io.File;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The copy's rows/s coordinated by Redis and by Postgres, in the same run: {@code rebalance copy} as one process
 * ({@code bin/rebalance}, 512 MB heap) of the same rows into a fresh table, once with {@code mover.coordinator:
 * redis} and once with {@code postgres} (its tables in the source's database), the order alternating between
 * repetitions. For each copy it prints what the Postgres server did meanwhile: transactions/s and WAL bytes/s, the
 * copy's own reads included, so the difference between the two is what coordinating in Postgres costs the source.
 *
 * <p>Usage: {@code CoordinatedCopyBenchmark <dynamodb-endpoint> <jdbc-url> <rows> <hours> <reps> <workers> <launcher>}
 */
public final class CoordinatedCopyBenchmark {
    private record Copy(double rowsPerSecond, double transactionsPerSecond, double walBytesPerSecond) {}

    public static void main(String[] args) throws Exception {
        String endpoint = args[0];
        String url = args[1];
        int rows = Integer.parseInt(args[2]);
        int hours = Integer.parseInt(args[3]);
        int reps = Integer.parseInt(args[4]);
        int workers = Integer.parseInt(args[5]);
        String launcher = args[6];
        String table = "bench_coordinated_copy";
        MigrationConfig config = new ConfigLoader(System.getenv())
                .load(null, Map.of("source.table", table, "target.endpoint", endpoint));
        BenchSteps.freshTable(config.source(), table, rows, hours, 3);
        Map<String, List<Copy>> byKind =
                new LinkedHashMap<>(Map.of("redis", new ArrayList<>(), "postgres", new ArrayList<>()));
        try (DynamoDbClient dynamo = DynamoClients.create(config.target(), endpoint, 4, List.of())) {
            for (int rep = 1; rep <= reps; rep++) {
                for (int k = 0; k < 2; k++) {
                    String kind = (k + rep) % 2 == 0 ? "postgres" : "redis"; // which goes first alternates
                    byKind.get(kind).add(copy(url, dynamo, launcher, endpoint, table, rows, workers, kind, rep));
                }
            }
        }
        System.out.println();
        System.out.printf("rows %,d over %d slots, %d workers; %d runs each; medians:%n", rows, hours, workers, reps);
        Map<String, Copy> medians = new LinkedHashMap<>();
        for (var e : byKind.entrySet()) {
            List<Copy> runs = e.getValue();
            Copy m = new Copy(
                    CopyBenchmark.median(runs.stream().map(Copy::rowsPerSecond).toList()),
                    CopyBenchmark.median(
                            runs.stream().map(Copy::transactionsPerSecond).toList()),
                    CopyBenchmark.median(
                            runs.stream().map(Copy::walBytesPerSecond).toList()));
            medians.put(e.getKey(), m);
            System.out.printf(
                    "  copy coordinated by %-8s %,8.0f rows/s   source: %,7.0f transactions/s, %,10.0f WAL B/s   %s%n",
                    e.getKey(),
                    m.rowsPerSecond(),
                    m.transactionsPerSecond(),
                    m.walBytesPerSecond(),
                    runs.stream().map(r -> Math.round(r.rowsPerSecond())).toList());
        }
        Copy r = medians.get("redis");
        Copy p = medians.get("postgres");
        System.out.printf(
                "  postgres / redis: %.2fx the rows/s; the source's extra load %+,.0f transactions/s, %+,.0f WAL B/s"
                        + " (%.0f WAL bytes a row)%n",
                p.rowsPerSecond() / r.rowsPerSecond(),
                p.transactionsPerSecond() - r.transactionsPerSecond(),
                p.walBytesPerSecond() - r.walBytesPerSecond(),
                (p.walBytesPerSecond() - r.walBytesPerSecond()) / p.rowsPerSecond());
    }

    private static Copy copy(
            String url,
            DynamoDbClient dynamo,
            String launcher,
            String endpoint,
            String source,
            int rows,
            int workers,
            String kind,
            int rep)
            throws Exception {
        String table = "bench_coordinated_" + kind + "_" + rep;
        TargetTable.create(dynamo, table, "id", KeyType.TEXT, new SlotIndex("by_slot", "_slot"));
        String run = "bench_" + kind + "_" + rep + "_" + System.currentTimeMillis();
        List<String> cmd = CopyBenchmark.copyCommand(launcher, endpoint, source, table, run + ":", workers);
        if (kind.equals("postgres")) {
            cmd.addAll(List.of("--set", "mover.coordinator=postgres", "--set", "coordinator.schema=" + run));
            cmd.addAll(List.of("--set", "redis.url=redis://127.0.0.1:1")); // none: nothing may reach Redis
        }
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("REBALANCE_JAVA_OPTS", "-Xmx512m");
        long[] before = CoordinatorBenchmark.serverCounters(url);
        long t0 = System.nanoTime();
        Process p = pb.redirectErrorStream(true)
                .redirectOutput(new File("bench/results/" + table + ".log"))
                .start();
        if (!p.waitFor(30, TimeUnit.MINUTES) || p.exitValue() != 0)
            throw new IllegalStateException("rebalance copy failed; see bench/results/" + table + ".log");
        double seconds = (System.nanoTime() - t0) / 1e9;
        long[] after = CoordinatorBenchmark.serverCounters(url);
        long count = TargetTable.countItems(dynamo, table, 4);
        dynamo.deleteTable(b -> b.tableName(table)); // frees DynamoDB Local's memory for the next copy
        if (count != rows) throw new IllegalStateException(kind + " wrote " + count + " items, not " + rows);
        if (kind.equals("postgres")) {
            try (Connection c = DriverManager.getConnection(url);
                    Statement st = c.createStatement()) {
                st.execute("DROP SCHEMA " + run + " CASCADE");
            }
        }
        Copy copy = new Copy(rows / seconds, (after[0] - before[0]) / seconds, (after[1] - before[1]) / seconds);
        System.out.printf(
                "  %-8s run %d: %,d rows in %6.1f s = %,8.0f rows/s; source %,7.0f transactions/s, %,10.0f WAL B/s%n",
                kind, rep, rows, seconds, copy.rowsPerSecond(), copy.transactionsPerSecond(), copy.walBytesPerSecond());
        return copy;
    }
}
