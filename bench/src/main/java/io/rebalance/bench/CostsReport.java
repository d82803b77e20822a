package io.rebalance.bench;

import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/** Prints what {@link CostsBenchmark} measured: medians of its repetitions, each beside its baseline. */
final class CostsReport {
    private CostsReport() {}

    static void print(
            Map<String, List<CostsBenchmark.Phase>> phases,
            List<Double> walPerWrite,
            int writesPerSecond,
            int rows,
            int slots,
            int workersEach) {
        List<CostsBenchmark.Phase> raw = phases.get("raw SDK loop (one thread, this JVM)");
        double rawCpu = median(raw, p -> p.per1000(p.clientCpu()) * 1000);
        System.out.printf(
                "%n%,d rows in %d slots; each copy process has %d workers; medians of %d repetitions%n",
                rows, slots, workersEach, raw.size());
        System.out.printf(
                "%-32s %9s %14s %9s %11s %9s %11s %11s %11s %11s%n",
                "per 1,000 rows copied",
                "rows/s",
                "client CPU ms",
                "x raw",
                "Redis cmds",
                "per slot",
                "Redis cmd/s",
                "PG stmts",
                "PG CPU ms",
                "WAL KB");
        for (Map.Entry<String, List<CostsBenchmark.Phase>> e : phases.entrySet()) {
            if (e.getKey().startsWith("verify") || e.getKey().startsWith("md5")) continue;
            List<CostsBenchmark.Phase> ps = e.getValue();
            double cpu = median(ps, p -> p.per1000(p.clientCpu()) * 1000);
            System.out.printf(
                    "%-32s %,9.0f %14.1f %8.2fx %11.1f %9.1f %,11.0f %11.1f %11.1f %11.1f%n",
                    e.getKey(),
                    median(ps, p -> p.rows() / p.seconds()),
                    cpu,
                    cpu / rawCpu,
                    median(ps, p -> p.per1000(p.redisCommands())),
                    median(ps, p -> (double) p.redisCommands() / p.slots()),
                    median(ps, p -> p.redisCommands() / p.seconds()),
                    median(ps, p -> p.per1000(p.statements())),
                    median(ps, p -> p.per1000(p.postgresCpu()) * 1000),
                    median(ps, p -> p.per1000(p.walBytes()) / 1024));
        }
        List<CostsBenchmark.Phase> verify = phases.get("verify --all");
        List<CostsBenchmark.Phase> md5 = phases.get("md5(row::text) of every row");
        double verifyCpu = median(verify, p -> p.per1000(p.postgresCpu()) * 1000);
        double md5Cpu = median(md5, p -> p.per1000(p.postgresCpu()) * 1000);
        System.out.printf(
                "%nverify --all: Postgres CPU %.2f ms per 1,000 rows against %.2f ms for one md5(row::text) of every"
                        + " row: %.2fx; its own process %.1f ms per 1,000 rows; %,.0f rows/s; %.1f statements per"
                        + " 1,000 rows%n",
                verifyCpu,
                md5Cpu,
                verifyCpu / md5Cpu,
                median(verify, p -> p.per1000(p.clientCpu()) * 1000),
                median(verify, p -> p.rows() / p.seconds()),
                median(verify, p -> p.per1000(p.statements())));
        double perWrite = median(walPerWrite);
        System.out.printf(
                "WAL of the application's writes (inserts, updates, deletes of room_events rows): %,.0f bytes a write;"
                        + " at %,d writes/s %.2f GB an hour, at 1,000 writes/s %.2f GB an hour: what the tail's slot"
                        + " holds for each hour the tail is stopped or that far behind%n",
                perWrite, writesPerSecond, perWrite * writesPerSecond * 3600 / 1e9, perWrite * 1000 * 3600 / 1e9);
    }

    private static double median(List<CostsBenchmark.Phase> ps, ToDoubleFunction<CostsBenchmark.Phase> f) {
        return median(ps.stream().map(f::applyAsDouble).toList());
    }

    static double median(List<Double> xs) {
        return CopyBenchmark.median(xs);
    }
}
