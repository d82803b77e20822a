package io.rebalance.bench;

import static io.rebalance.bench.BenchSteps.check;

import io.rebalance.cli.RebalanceCommand;
import io.rebalance.client.GuardSettings;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.source.SourceTable;
import io.rebalance.protocol.route.Target;
import io.rebalance.sim.CutoverCycles;
import io.rebalance.sim.Percentiles;
import io.rebalance.sim.TenantSimulator;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.IntStream;

/**
 * One part's cutover beside the others' writes: a table of 20 tenants, the pilot (tenant 1) one part and the other 19
 * the rest, an application writing 300/s through the guard (one writer per tenant). Each cycle runs the application
 * for a while with no window (the other tenants' write p99 then is the baseline), then cuts the pilot over and rolls
 * it back (its write-blocked windows, and the other tenants' write p99 meanwhile). Three rounds of cycles; each round's
 * figures and their medians. The tail and the commands run in this JVM; DynamoDB Local in its own process.
 */
public final class PartedCutoverBenchmark {
    private static final String TABLE = "bench_parted";
    private static final String PREFIX = "bench:parted:";
    private static final String PARTS = "[{name: pilot, values: [1]}, {name: rest}]";
    private static final int TENANTS = 20;
    private static final int ROUNDS = 3;

    private PartedCutoverBenchmark() {}

    /** Args: DynamoDB endpoint, rows per tenant, cycles per round, seconds of the no-window phase. */
    public static void main(String[] args) throws Exception {
        String endpoint = args[0];
        int rowsPerTenant = Integer.parseInt(args[1]);
        int cycles = Integer.parseInt(args[2]);
        int seconds = Integer.parseInt(args[3]);
        Map<String, String> settings = CutoverStage.settings(TABLE, PREFIX, endpoint);
        settings.put("slots.timeFrom", "column");
        settings.put("slots.timeColumn", "created_at");
        settings.put("cutover.parts", PARTS);
        PrintStream out = System.out;
        try (CutoverStage stage = CutoverStage.start(settings, st -> {
            st.execute("CREATE TABLE " + TABLE + " (tenant_id int NOT NULL, id bigint NOT NULL, seq bigint NOT"
                    + " NULL, created_at timestamptz NOT NULL, PRIMARY KEY (tenant_id, id))");
            st.execute("INSERT INTO " + TABLE + " SELECT t, i, 1, timestamptz '2024-10-20 00:00Z' + i * interval '"
                    + (48 * 3600 / rowsPerTenant) + " seconds' FROM generate_series(1, " + TENANTS
                    + ") t, generate_series(1, " + rowsPerTenant + ") i");
        })) {
            MigrationConfig config = stage.config;
            SourceTable source = stage.source;
            CutoverCycles commands = new CutoverCycles(stage.flags, null, out, RebalanceCommand::execute);
            stage.copied(commands, List.of("cutover", "--dry-run", "--part", "pilot"));
            GuardSettings guard = new GuardSettings(
                            PREFIX,
                            Duration.ofSeconds(5),
                            Duration.ofSeconds(30),
                            config.cutover().pgFence(),
                            config.cutover().dynamoFence())
                    .withParts(TABLE, config.cutover().partMap());
            List<Integer> others = IntStream.rangeClosed(2, TENANTS).boxed().toList();
            try (TenantSimulator app = new TenantSimulator(
                            TABLE,
                            source,
                            stage.session,
                            TABLE,
                            stage.redis(),
                            stage.dynamo(),
                            guard,
                            source.codec(config.target()),
                            TENANTS)
                    .start(300, 50, 11)) {
                out.printf(
                        "%d tenants x %,d rows; the pilot (tenant 1) is one part, the other %d the rest; 300 writes/s%n",
                        TENANTS, rowsPerTenant, others.size());
                List<long[]> rounds = new ArrayList<>();
                for (int round = 1; round <= ROUNDS; round++) {
                    List<Long> windows = new ArrayList<>();
                    List<Long> quiet = new ArrayList<>();
                    List<Long> during = new ArrayList<>();
                    for (int cycle = 0; cycle < cycles; cycle++) {
                        app.drainLatencies(others);
                        LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(seconds)); // no window: the application runs
                        for (long l : app.drainLatencies(others)) quiet.add(l);
                        CutoverCycles.Command cut = commands.command(List.of("cutover", "--part", "pilot"));
                        CutoverCycles.Command back =
                                commands.command(List.of("cutover", "--rollback", "--part", "pilot"));
                        check(cut);
                        check(back);
                        windows.add(cut.blockedMs());
                        windows.add(back.blockedMs());
                        for (long l : app.drainLatencies(others)) during.add(l);
                    }
                    long[] w = array(windows);
                    long[] q = array(quiet);
                    long[] d = array(during);
                    long[] r = {
                        Percentiles.of(w, 0.5),
                        Percentiles.of(w, 0.95),
                        Percentiles.of(q, 0.99) / 1000,
                        Percentiles.of(d, 0.99) / 1000,
                        q.length,
                        d.length
                    };
                    rounds.add(r);
                    out.printf(
                            "round %d: pilot window p50 %d ms, p95 %d ms (%d windows); other tenants' write p99 %d ms"
                                    + " in the pilot's commands (%d writes) against %d ms with no window (%d writes):"
                                    + " %.2fx%n",
                            round, r[0], r[1], w.length, r[3], r[5], r[2], r[4], (double) r[3] / Math.max(1, r[2]));
                }
                long[] m = new long[4];
                for (int i = 0; i < 4; i++) {
                    int f = i;
                    m[i] = rounds.stream().mapToLong(x -> x[f]).sorted().toArray()[ROUNDS / 2];
                }
                out.printf(
                        "median of %d rounds: pilot window p50 %d ms, p95 %d ms; other tenants' write p99 %d ms in its"
                                + " windows against %d ms with none: %.2fx (goal: 1.5x at most)%n",
                        ROUNDS, m[0], m[1], m[3], m[2], (double) m[3] / Math.max(1, m[2]));
                app.close();
                List<String> problems = app.check(tenant -> Target.POSTGRES);
                out.printf(
                        "every acknowledged write in Postgres, once: %s; stale reads: %d; failed writes: %d%n",
                        problems.isEmpty() ? "yes" : "NO " + problems,
                        app.staleReads().size(),
                        app.failed());
            }
        }
    }

    private static long[] array(List<Long> xs) {
        return xs.stream().mapToLong(Long::longValue).toArray();
    }
}
