package io.rebalance.bench;

import io.rebalance.core.config.ConfigLoader;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.DynamoClients;
import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.dynamo.TargetTable;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.local.CapacityModel;
import io.rebalance.local.RoomEventsGenerator;
import java.io.File;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Pacing to DynamoDB's write capacity: several {@code rebalance copy} processes of one run write through the capacity
 * model ({@link CapacityModel}: a table's write units per second, 1,000 per partition, DynamoDB's throttling answers)
 * in front of DynamoDB Local. Per repetition: the write units the model charged per second of the copy against the
 * units allowed, and the share of write requests it throttled. Arguments: endpoint rows hours reps processes units
 * workers launcher.
 */
public final class PacingBenchmark {
    static final String TABLE = "bench_pacing_events";

    public static void main(String[] args) throws Exception {
        String endpoint = args[0];
        int rows = Integer.parseInt(args[1]);
        int hours = Integer.parseInt(args[2]);
        int reps = Integer.parseInt(args[3]);
        int processes = Integer.parseInt(args[4]);
        long units = Long.parseLong(args[5]);
        int workers = Integer.parseInt(args[6]);
        String launcher = args[7];
        Map<String, String> base = new HashMap<>(
                Map.of("source.table", TABLE, "target.table", "bench_pacing", "target.endpoint", endpoint));
        MigrationConfig config = new ConfigLoader(System.getenv()).load(null, base);
        System.out.printf("generating %,d rows over %d hours in %s%n", rows, hours, TABLE);
        try (Connection c = new SourceSession(config.source()).open();
                Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS " + TABLE);
            RoomEventsGenerator.create(c, TABLE, rows, Instant.parse("2024-10-20T00:00:00Z"), hours, 5);
        }
        SourceTable source;
        try (Connection c = new SourceSession(config.source()).open()) {
            source = SourceTable.inspect(c, config);
        }
        List<Double> achieved = new ArrayList<>();
        List<Double> throttled = new ArrayList<>();
        List<Double> seconds = new ArrayList<>();
        try (DynamoDbClient dynamo = DynamoClients.create(config.target(), endpoint, 8, List.of())) {
            for (int rep = 1; rep <= reps; rep++) {
                String table = "bench_pacing_" + rep + "_" + System.nanoTime();
                TargetTable.create(dynamo, table, source.key(), SlotIndex.of(config.target()));
                try (CapacityModel model = CapacityModel.start(endpoint, units)) {
                    String prefix = "bench:pacing:" + System.nanoTime() + ":";
                    long t0 = System.nanoTime();
                    List<Process> running = new ArrayList<>();
                    for (int p = 0; p < processes; p++)
                        running.add(copy(launcher, model.endpoint(), table, prefix, workers, p));
                    for (Process p : running) {
                        if (p.waitFor() != 0)
                            throw new IllegalStateException(
                                    "rebalance copy exited " + p.exitValue() + "; see bench/results/pacing-*.log");
                    }
                    double s = (System.nanoTime() - t0) / 1e9;
                    seconds.add(s);
                    achieved.add(model.consumedUnits() / s);
                    throttled.add(100.0 * model.throttledRequests() / Math.max(1, model.writeRequests()));
                    System.out.printf(
                            "  run %d: %.1f s, %,.0f units/s of %,d allowed (%.0f%%), %.1f%% of %,d write requests"
                                    + " throttled, %,d items handed back or refused%n",
                            rep,
                            s,
                            achieved.get(rep - 1),
                            units,
                            100 * achieved.get(rep - 1) / units,
                            throttled.get(rep - 1),
                            model.writeRequests(),
                            model.throttledItems());
                }
                dynamo.deleteTable(b -> b.tableName(table));
            }
        }
        double a = CopyBenchmark.median(achieved);
        double t = CopyBenchmark.median(throttled);
        System.out.println();
        System.out.printf(
                "rows %,d over %d hours; %d copy processes of %d workers; capacity model %,d units/s; %d runs;"
                        + " medians:%n",
                rows, hours, processes, workers, units, reps);
        System.out.printf(
                "  copy today (rows/s limit off)   %,8.0f units/s = %3.0f%% of allowed   %5.1f%% throttled   %s s%n",
                a, 100 * a / units, t, seconds);
        System.out.printf("  goal (issue): >= 90%% of allowed with < 2%% of requests throttled%n");
    }

    private static Process copy(String launcher, String endpoint, String table, String prefix, int workers, int n)
            throws Exception {
        List<String> cmd = CopyBenchmark.copyCommand(launcher, endpoint, TABLE, table, prefix, workers);
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("REBALANCE_JAVA_OPTS", "-Xmx384m");
        return pb.redirectErrorStream(true)
                .redirectOutput(new File("bench/results/pacing-" + n + ".log"))
                .start();
    }

    private PacingBenchmark() {}
}
