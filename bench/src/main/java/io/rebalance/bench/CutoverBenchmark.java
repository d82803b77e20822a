package io.rebalance.bench;

import static io.rebalance.bench.BenchSteps.check;

import io.rebalance.cli.RebalanceCommand;
import io.rebalance.client.GuardSettings;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.source.SourceTable;
import io.rebalance.local.DelayProxy;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.protocol.route.Target;
import io.rebalance.sim.AppSimulator;
import io.rebalance.sim.CutoverCycles;
import io.rebalance.sim.Percentiles;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The write-blocked window of {@code rebalance cutover} and {@code --rollback} over cutover-and-rollback cycles with
 * the application simulator writing 500/s through the guard, against the same cycles with every slot
 * verified inside the window ({@code --verify-all}: what the cutover blocks without verifying before the window);
 * then the guarded application's write rate and latency on either store against the same application writing without
 * the guard. The tail and the commands run in this JVM; DynamoDB Local in its own process.
 */
public final class CutoverBenchmark {
    private static final String TABLE = "bench_cutover";
    private static final String PREFIX = "bench:cutover:";

    public static void main(String[] args) throws Exception {
        String endpoint = args[0];
        int rows = Integer.parseInt(args[1]);
        int cycles = Integer.parseInt(args[2]);
        int baselineCycles = Integer.parseInt(args[3]);
        int seconds = Integer.parseInt(args[4]);
        long delayMs = args.length > 5 ? Long.parseLong(args[5]) : 0;
        // every DynamoDB call made slower by delayMs (a target farther away than this machine), or none
        DelayProxy delay = delayMs > 0 ? DelayProxy.start(endpoint, delayMs) : null;
        if (delay != null) {
            endpoint = delay.endpoint();
            System.out.printf("every DynamoDB call delayed by %d ms (a proxy in front of DynamoDB Local)%n", delayMs);
        }
        try {
            measure(endpoint, rows, cycles, baselineCycles, seconds, delayMs);
        } finally {
            if (delay != null) delay.close(); // its server's dispatcher thread would keep the JVM from exiting
        }
    }

    private static void measure(String endpoint, int rows, int cycles, int baselineCycles, int seconds, long delayMs)
            throws Exception {
        Map<String, String> settings = CutoverStage.settings(TABLE, PREFIX, endpoint);
        // FENCE_STRIPES: the DynamoDB fence's items (ADR 19), 1 unless set
        settings.put("cutover.dynamoFenceStripes", System.getenv().getOrDefault("FENCE_STRIPES", "1"));
        PrintStream out = System.out;
        try (CutoverStage stage = CutoverStage.start(
                settings,
                st -> RoomEventsGenerator.create(
                        st.getConnection(), TABLE, rows, Instant.parse("2024-10-20T00:00:00Z"), 48, 5))) {
            MigrationConfig config = stage.config;
            List<String> cli = stage.flags;
            SourceTable source = stage.source;
            UnifiedJedis redis = stage.redis();
            DynamoDbClient dynamo = stage.dynamo();
            GuardSettings guard = new GuardSettings(
                    PREFIX,
                    Duration.ofSeconds(5),
                    Duration.ofSeconds(30),
                    config.cutover().pgFence(),
                    config.cutover().dynamoFence());
            try (AppSimulator app = new AppSimulator(config, source, redis, dynamo, guard)) {
                CutoverCycles setup = new CutoverCycles(cli, app, out, RebalanceCommand::execute);
                long t0 = System.nanoTime();
                stage.copied(setup, List.of("cutover", "--dry-run"));
                out.printf(
                        "%,d rows over 48 hourly slots copied and verified in %.0f s%n",
                        rows, (System.nanoTime() - t0) / 1e9);

                AppSimulator.Load load = AppSimulator.Load.acceptance();
                app.start(load, 11);
                out.printf(
                        "application: %d writes/s on %d threads through the guard, %d reads/s through the router%n",
                        load.writesPerSecond(), load.writers(), load.readsPerSecond());
                // warm-up: JIT and DynamoDB Local's first minute, for every phase after it alike
                new CutoverCycles(cli, app, new PrintStream(PrintStream.nullOutputStream()), RebalanceCommand::execute)
                        .run(3, 250);

                out.printf(
                        "%n%d cutover-and-rollback cycles (changed slots verified before the window, keys written since in it):%n",
                        cycles);
                List<CutoverCycles.Cycle> ours =
                        new CutoverCycles(cli, app, out, RebalanceCommand::execute).run(cycles, 250);
                out.printf("%n%d cycles with --verify-all (every slot verified in the window):%n", baselineCycles);
                List<CutoverCycles.Cycle> all = new CutoverCycles(cli, app, out, RebalanceCommand::execute)
                        .cutoverFlags("--verify-all")
                        .run(baselineCycles, 250);

                // the write rate: a fresh application per offered rate, guarded and plain by turns, the main one paused
                app.pause();
                List<RateRow> rates = new ArrayList<>();
                long rateFailures = 0;
                out.printf("%nwrite rate, %d s per phase, %d runs each:%n", seconds, RATE_RUNS);
                for (int offered : List.of(500, 2000)) {
                    for (Target t :
                            offered == 500 ? List.of(Target.POSTGRES, Target.DYNAMODB) : List.of(Target.DYNAMODB)) {
                        if (t == Target.DYNAMODB) check(setup.command(List.of("cutover")));
                        RateRow row = new RateRow(t, offered);
                        try (AppSimulator rated = new AppSimulator(config, source, redis, dynamo, guard)) {
                            rated.start(rateLoad(offered), 100 + offered);
                            for (int run = 1; run <= RATE_RUNS; run++) {
                                for (int k = 0; k < 2; k++) {
                                    boolean guarded = (k == 0) == (run % 2 == 1); // guarded first in odd runs
                                    rated.unguarded(guarded ? null : t);
                                    (guarded ? row.guarded : row.plain)
                                            .add(rate(
                                                    rated,
                                                    out,
                                                    t,
                                                    (guarded ? "guarded" : "plain  ") + " @" + offered,
                                                    seconds));
                                }
                            }
                            rated.unguarded(null);
                            rateFailures += rated.ledger().failures();
                        }
                        rates.add(row);
                        if (t == Target.DYNAMODB) check(setup.command(List.of("cutover", "--rollback")));
                    }
                }
                app.resume();

                out.println();
                out.println("== write-blocked window (medians are p50) ==");
                long[] windows = windows(ours, true, true);
                long[] cuts = windows(ours, true, false);
                long[] backs = windows(ours, false, true);
                long[] naive = windows(all, true, false);
                out.printf(
                        "all %d windows          p50 %4d ms  p95 %4d ms  p99 %4d ms  max %4d ms   (goal: p95 <= %d ms)%n",
                        windows.length,
                        Percentiles.of(windows, 0.5),
                        Percentiles.of(windows, 0.95),
                        Percentiles.of(windows, 0.99),
                        Percentiles.of(windows, 1.0),
                        delayMs >= 50 ? 500 : 300);
                out.printf(
                        "  cutover (%2d)          p50 %4d ms  p99 %4d ms%n",
                        cuts.length, Percentiles.of(cuts, 0.5), Percentiles.of(cuts, 0.99));
                out.printf(
                        "  rollback (%2d)         p50 %4d ms  p99 %4d ms%n",
                        backs.length, Percentiles.of(backs, 0.5), Percentiles.of(backs, 0.99));
                out.printf(
                        "baseline: cutover with --verify-all (%d)  p50 %4d ms  p99 %4d ms%n",
                        naive.length, Percentiles.of(naive, 0.5), Percentiles.of(naive, 0.99));
                out.printf(
                        "ratio (baseline p50 / cutover p50): %.1fx%n",
                        (double) Percentiles.of(naive, 0.5) / Math.max(1, Percentiles.of(cuts, 0.5)));
                out.printf(
                        "aborted cutovers (window over cutover.maxWriteBlock, everything put back): %d of %d,"
                                + " with --verify-all %d of %d%n",
                        ours.stream().filter(CutoverCycles.Cycle::aborted).count(),
                        ours.size(),
                        all.stream().filter(CutoverCycles.Cycle::aborted).count(),
                        all.size());
                out.println("steps of the cutovers, p50 ms: " + stepMedians(ours, true));
                out.println("steps of the rollbacks, p50 ms: " + stepMedians(ours, false));
                out.println("== every cycle ==");
                boolean clean = ours.stream().allMatch(CutoverCycles.Cycle::clean)
                        && all.stream().allMatch(CutoverCycles.Cycle::clean);
                out.printf(
                        "%s; %d stale reads (%d reads from Postgres, %d from DynamoDB); %d failed writes%n",
                        clean
                                ? "both stores held every acknowledged write exactly once after every cycle"
                                : "A CYCLE WAS NOT CLEAN (see above)",
                        app.staleReads().size(),
                        app.reads(Target.POSTGRES),
                        app.reads(Target.DYNAMODB),
                        app.ledger().failures());
                out.printf(
                        "== write rate, medians of %d (guarded / plain); %d failed writes ==%n",
                        RATE_RUNS, rateFailures);
                for (RateRow r : rates) {
                    long[] g = r.median(r.guarded);
                    long[] p = r.median(r.plain);
                    out.printf(
                            "%-8s %4d/s offered: guarded %4d/s (p50 %d ms, p99 %d ms)   plain %4d/s (p50 %d ms, p99 %d ms)"
                                    + "   rate %.0f%%, p99 %.2fx%s%n",
                            r.target,
                            r.offered,
                            g[0],
                            g[1],
                            g[2],
                            p[0],
                            p[1],
                            p[2],
                            100.0 * g[0] / Math.max(1, p[0]),
                            (double) g[2] / Math.max(1, p[2]),
                            r.target != Target.DYNAMODB
                                    ? ""
                                    : r.offered == 500 ? "   (goal >= 90%, p99 <= 2x)" : "   (goal >= 80%)");
                }
                app.staleReads().forEach(out::println);
                app.errors().forEach(out::println);
            }
        }
    }

    private static final int RATE_RUNS = 3;

    /** The acceptance load's mix at another rate: 80 threads for each 1,000 writes/s (a thread waits for each write). */
    private static AppSimulator.Load rateLoad(int writesPerSecond) {
        AppSimulator.Load a = AppSimulator.Load.acceptance();
        return new AppSimulator.Load(
                Math.max(a.writers(), writesPerSecond * 80 / 1000),
                writesPerSecond,
                a.readers(),
                a.readsPerSecond(),
                a.updateShare(),
                a.oldShare());
    }

    /** One store at one offered rate: each run's {writes/s, p50 ms, p99 ms}, guarded and plain. */
    private static final class RateRow {
        final Target target;
        final int offered;
        final List<long[]> guarded = new ArrayList<>();
        final List<long[]> plain = new ArrayList<>();

        RateRow(Target target, int offered) {
            this.target = target;
            this.offered = offered;
        }

        long[] median(List<long[]> runs) {
            long[] m = new long[3];
            for (int i = 0; i < 3; i++) {
                int f = i;
                long[] xs = runs.stream().mapToLong(r -> r[f]).sorted().toArray();
                m[i] = xs[xs.length / 2];
            }
            return m;
        }
    }

    /** @return the acknowledged writes a second to {@code target} over {@code seconds}, and latency p50/p99 in ms */
    private static long[] rate(AppSimulator app, PrintStream out, Target target, String what, int seconds) {
        LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(2)); // settle: writes held back by a switch catch up first
        app.drainWriteLatencies();
        long before = app.ledger().acknowledged(target);
        long start = System.nanoTime();
        LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(seconds)); // the measured phase: the application runs
        double secs = (System.nanoTime() - start) / 1e9;
        long n = app.ledger().acknowledged(target) - before;
        long[] lat = app.drainWriteLatencies();
        long[] r = {Math.round(n / secs), Percentiles.of(lat, 0.5) / 1000, Percentiles.of(lat, 0.99) / 1000};
        out.printf("  %-8s %s %4d writes/s, latency p50 %d ms, p99 %d ms%n", target, what, r[0], r[1], r[2]);
        return r;
    }

    private static long[] windows(List<CutoverCycles.Cycle> cycles, boolean cutovers, boolean rollbacks) {
        List<Long> out = new ArrayList<>();
        for (CutoverCycles.Cycle c : cycles) {
            if (cutovers) out.add(c.cutover().blockedMs());
            if (rollbacks && !c.aborted()) out.add(c.rollback().blockedMs());
        }
        return out.stream().mapToLong(Long::longValue).toArray();
    }

    private static Map<String, Long> stepMedians(List<CutoverCycles.Cycle> cycles, boolean cutover) {
        Map<String, List<Long>> by = new LinkedHashMap<>();
        for (CutoverCycles.Cycle c : cycles) {
            (cutover ? c.cutover() : c.rollback()).stepMs().forEach((step, ms) -> by.computeIfAbsent(
                            step, k -> new ArrayList<>())
                    .add(ms));
        }
        Map<String, Long> out = new LinkedHashMap<>();
        by.forEach((step, ms) -> out.put(
                step, Percentiles.of(ms.stream().mapToLong(Long::longValue).toArray(), 0.5)));
        return out;
    }
}
