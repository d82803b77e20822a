package io.rebalance.bench;

import io.rebalance.core.config.ConfigLoader;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.DynamoClients;
import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.dynamo.TargetTable;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.local.CapacityModel;
import java.io.File;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Pacing to DynamoDB's write capacity: several {@code rebalance copy} processes of one run write through the capacity
 * model ({@link CapacityModel}: a table's write units per second, 1,000 per partition, DynamoDB's throttling answers)
 * in front of DynamoDB Local. Per repetition, today's copy (no write-unit budget) and the paced copy
 * ({@code mover.writeUnits} set to the model's units), in alternating order: the write units the model charged per
 * second while writes came in (and over the whole copy, JVM start included) against the units allowed, and the share
 * of write requests it throttled. Arguments: endpoint rows hours reps processes units
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
        BenchSteps.freshTable(config.source(), TABLE, rows, hours, 5);
        SourceTable source;
        try (Connection c = new SourceSession(config.source()).open()) {
            source = SourceTable.inspect(c, config);
        }
        Phase today = new Phase("copy today (rows/s limit off)", 0);
        Phase paced = new Phase("copy paced (mover.writeUnits=" + units + ")", units);
        // a budget above what the table takes: the rate allowed must come down to it on throttling
        Phase above = new Phase("copy paced (mover.writeUnits=" + units * 3 / 2 + ")", units * 3 / 2);
        try (DynamoDbClient dynamo = DynamoClients.create(config.target(), endpoint, 8, List.of())) {
            for (int rep = 1; rep <= reps; rep++) {
                // the order alternates, so that neither phase is always the first after the table was made
                for (Phase phase : rep % 2 == 1 ? List.of(today, paced, above) : List.of(above, paced, today))
                    run(
                            phase,
                            dynamo,
                            source,
                            SlotIndex.of(config.target()),
                            endpoint,
                            launcher,
                            rep,
                            processes,
                            units,
                            workers);
            }
        }
        System.out.println();
        System.out.printf(
                "rows %,d over %d hours; %d copy processes of %d workers; capacity model %,d units/s; %d runs;"
                        + " medians:%n",
                rows, hours, processes, workers, units, reps);
        for (Phase p : List.of(today, paced, above)) {
            double w = CopyBenchmark.median(p.whileWriting);
            double a = CopyBenchmark.median(p.achieved);
            System.out.printf(
                    "  %-36s %,6.0f units/s while writing = %3.0f%% of allowed   %5.1f%% throttled   (%,.0f units/s"
                            + " = %.0f%% over the whole copy, JVM start included; %s s)%n",
                    p.name, w, 100 * w / units, CopyBenchmark.median(p.throttled), a, 100 * a / units, p.seconds);
        }
        System.out.printf("  goal (issue): >= 90%% of allowed with < 2%% of requests throttled%n");
    }

    /** One configuration's figures over the runs. */
    private static final class Phase {
        final String name;
        final long writeUnits;
        final List<Double> achieved = new ArrayList<>();
        final List<Double> whileWriting = new ArrayList<>();
        final List<Double> throttled = new ArrayList<>();
        final List<Double> seconds = new ArrayList<>();

        Phase(String name, long writeUnits) {
            this.name = name;
            this.writeUnits = writeUnits;
        }
    }

    private static void run(
            Phase phase,
            DynamoDbClient dynamo,
            SourceTable source,
            SlotIndex index,
            String endpoint,
            String launcher,
            int rep,
            int processes,
            long units,
            int workers)
            throws Exception {
        String table = "bench_pacing_" + rep + "_" + System.nanoTime();
        TargetTable.create(
                dynamo,
                table,
                source.key(),
                SlotIndex.of(
                        new ConfigLoader(System.getenv()).load(null, Map.of()).target()));
        try (CapacityModel model = CapacityModel.start(endpoint, units)) {
            String prefix = "bench:pacing:" + System.nanoTime() + ":";
            long t0 = System.nanoTime();
            List<Process> running = new ArrayList<>();
            for (int p = 0; p < processes; p++)
                running.add(copy(launcher, model.endpoint(), table, prefix, workers, p, phase.writeUnits));
            for (Process p : running) {
                if (p.waitFor() != 0)
                    throw new IllegalStateException(
                            "rebalance copy exited " + p.exitValue() + "; see bench/results/pacing-*.log");
            }
            double s = (System.nanoTime() - t0) / 1e9;
            phase.seconds.add(Math.round(s * 10) / 10.0);
            phase.achieved.add(model.consumedUnits() / s);
            double w = model.consumedUnits() / model.writingSeconds();
            phase.whileWriting.add(w);
            double t = 100.0 * model.throttledRequests() / Math.max(1, model.writeRequests());
            phase.throttled.add(t);
            System.out.printf(
                    "  run %d, %s: %.1f s, %,.0f units/s while writing (%.0f%% of %,d), %.1f%% of %,d write requests"
                            + " throttled, %,d items handed back or refused%n",
                    rep, phase.name, s, w, 100 * w / units, units, t, model.writeRequests(), model.throttledItems());
        }
        dynamo.deleteTable(b -> b.tableName(table));
    }

    private static Process copy(
            String launcher, String endpoint, String table, String prefix, int workers, int n, long writeUnits)
            throws Exception {
        List<String> cmd = CopyBenchmark.copyCommand(launcher, endpoint, TABLE, table, prefix, workers);
        cmd.addAll(List.of("--set", "mover.writeUnits=" + writeUnits));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("REBALANCE_JAVA_OPTS", "-Xmx384m");
        return pb.redirectErrorStream(true)
                .redirectOutput(new File("bench/results/pacing-" + n + ".log"))
                .start();
    }

    private PacingBenchmark() {}
}
