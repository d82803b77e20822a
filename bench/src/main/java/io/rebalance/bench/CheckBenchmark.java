package io.rebalance.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.core.codec.ItemSize;
import io.rebalance.core.config.ConfigLoader;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.DynamoClients;
import io.rebalance.core.source.SourceSession;
import java.io.File;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * How close {@code rebalance check}'s estimate is to what the copy then writes, on the demo's table (200,000 rows over
 * 120 hours by default), and what the check costs:
 *
 * <ul>
 *   <li><b>estimate</b>: {@code rebalance check --json}'s write units (table and slot index) and item bytes;
 *   <li><b>written</b> (the baseline): {@code rebalance copy --create-table} of the same table, then every item
 *       scanned back and DynamoDB's item-size rules applied to it ({@link ItemSize}), the units it consumed;
 *   <li><b>time</b>: the check's wall time (process start to exit) with its default sessions (verify.parallel, 4)
 *       and with one session (the baseline), medians of the runs, beside the copy's.
 * </ul>
 *
 * Arguments: endpoint rows hours reps launcher (bin/rebalance).
 */
public final class CheckBenchmark {
    private static final ObjectMapper JSON = new ObjectMapper();

    public static void main(String[] args) throws Exception {
        String endpoint = args[0];
        int rows = Integer.parseInt(args[1]);
        int hours = Integer.parseInt(args[2]);
        int reps = Integer.parseInt(args[3]);
        String launcher = args[4];
        String table = "bench_check_events";
        MigrationConfig config = new ConfigLoader(System.getenv())
                .load(null, Map.of("source.table", table, "target.endpoint", endpoint));

        BenchSteps.freshTable(config.source(), table, rows, hours, 7);
        try (Connection c = new SourceSession(config.source()).open();
                Statement st = c.createStatement()) {
            st.execute("ANALYZE " + table);
        }
        String prefix = "bench:check:" + System.nanoTime() + ":";
        List<String> flags = List.of(
                "--set", "source.table=" + table,
                "--set", "target.table=" + table,
                "--set", "target.endpoint=" + endpoint,
                "--set", "redis.prefix=" + prefix);

        List<Double> checkSeconds = new ArrayList<>();
        List<Double> oneSession = new ArrayList<>();
        JsonNode report = null;
        for (int rep = 1; rep <= reps; rep++) {
            long start = System.nanoTime();
            JsonNode one = JSON.readTree(run(launcher, "check", flags, 0, "--json", "--parallel", "1"));
            oneSession.add((System.nanoTime() - start) / 1e9);
            start = System.nanoTime();
            report = JSON.readTree(run(launcher, "check", flags, 0, "--json"));
            checkSeconds.add((System.nanoTime() - start) / 1e9);
            if (!one.equals(report)) throw new IllegalStateException("one session reported otherwise than several");
            System.out.printf(
                    "  check run %d: %6.1f s; with one session %6.1f s%n",
                    rep, checkSeconds.get(rep - 1), oneSession.get(rep - 1));
        }
        long estimatedUnits = report.path("writeUnits").path("total").asLong();
        long estimatedBytes = report.path("itemBytes").path("total").asLong();

        long start = System.nanoTime();
        run(launcher, "copy", flags, 0, "--create-table", "--no-concurrent-writers", "--no-progress");
        double copySeconds = (System.nanoTime() - start) / 1e9;
        long units = 0;
        long bytes = 0;
        long items = 0;
        try (DynamoDbClient dynamo = DynamoClients.create(config.target(), endpoint, 4, List.of())) {
            for (var page : dynamo.scanPaginator(b -> b.tableName(table))) {
                for (Map<String, AttributeValue> item : page.items()) {
                    long size = ItemSize.of(item);
                    bytes += size;
                    units += ItemSize.tableUnits(size) + ItemSize.indexUnits(size);
                    items++;
                }
            }
            dynamo.deleteTable(b -> b.tableName(table));
        }
        if (items != rows) throw new IllegalStateException("the copy wrote " + items + " items, not " + rows);

        System.out.println();
        System.out.printf("rows %,d over %d slots; check run %d times:%n", rows, hours, reps);
        System.out.printf(
                "  write units: check estimated %,d; the written items consume %,d; estimate / written = %.3f"
                        + "   (goal 0.8 to 1.2)%n",
                estimatedUnits, units, (double) estimatedUnits / units);
        System.out.printf(
                "  item bytes:  check estimated %,d; the written items hold %,d; estimate / written = %.4f%n",
                estimatedBytes, bytes, (double) estimatedBytes / bytes);
        double check = CopyBenchmark.median(checkSeconds);
        double one = CopyBenchmark.median(oneSession);
        System.out.printf(
                "  time: check %.1f s (median of %s), with one session %.1f s (%s): %.2fx faster;"
                        + " copy %.1f s; check / copy = %.0f%%%n",
                check, checkSeconds, one, oneSession, one / check, copySeconds, 100 * check / copySeconds);
    }

    /** Runs one command as a user does (the launcher, its JVM flags) and returns its standard output. */
    private static String run(String launcher, String command, List<String> flags, int exit, String... more)
            throws Exception {
        List<String> cmd = new ArrayList<>(List.of(launcher, command));
        cmd.addAll(flags);
        cmd.addAll(List.of(more));
        File out = new File("bench/results/check-" + command + ".out");
        Process p = new ProcessBuilder(cmd)
                .redirectOutput(out)
                .redirectError(new File("bench/results/check-" + command + ".err"))
                .start();
        if (p.waitFor() != exit) {
            throw new IllegalStateException("rebalance " + command + " exited " + p.exitValue()
                    + "; see bench/results/check-" + command + ".err");
        }
        return Files.readString(out.toPath());
    }

    private CheckBenchmark() {}
}
