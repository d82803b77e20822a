package io.rebalance.bench;

import io.rebalance.core.codec.RowCodec;
import io.rebalance.core.codec.SourceRow;
import io.rebalance.core.config.ConfigLoader;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.DynamoClients;
import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.dynamo.TargetTable;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.source.PageReader;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.verifier.CanonicalItem;
import io.rebalance.verifier.Fingerprint;
import io.rebalance.verifier.InFlight;
import io.rebalance.verifier.Verifier;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;

/**
 * Verification cost, on the same generated rows in one run, repeated and reported as medians:
 * <ul>
 *   <li><b>Postgres, server-side</b>: every slot's fingerprint computed by Postgres, one query per span of hours
 *       ({@code Verifier.spans}, what {@code verify} does): bytes received from Postgres (counted at the socket), wall
 *       time, and the CPU the Postgres processes spent;
 *   <li><b>Postgres, a query an hour</b>: the same fingerprints one query per slot, as {@code verify} took them
 *       before spans: wall time and CPU, the baseline of the spans in the same run;
 *   <li><b>Postgres, md5 baseline</b>: the cheapest exact hash, {@code md5(row::text)} summed per span over the same
 *       spans on the same threads: the CPU the Postgres processes spent, which the fingerprint's is compared to;
 *   <li><b>Postgres, naive</b>: every slot's rows fetched and hashed in the client with the same encoding: bytes
 *       and wall time; both with the same number of threads;
 *   <li><b>DynamoDB, verifier</b>: every slot's items read through the slot index and hashed, items/s;
 *   <li><b>DynamoDB, ceiling</b>: the same Query pages on the same threads with nothing done to the items.
 * </ul>
 * Arguments: endpoint rows hours reps threads.
 */
public final class VerifyBenchmark {
    static final String TABLE = "bench_room_events";

    public static void main(String[] args) throws Exception {
        BenchArgs a = BenchArgs.of(args);
        Map<String, String> base = new HashMap<>(
                Map.of("source.table", TABLE, "target.table", "bench_verify", "target.endpoint", a.endpoint()));
        MigrationConfig plain = new ConfigLoader(System.getenv()).load(null, base);
        String url = plain.source().jdbcUrl();
        base.put(
                "source.jdbcUrl",
                url + (url.contains("?") ? "&" : "?") + "socketFactory=" + CountingSocketFactory.class.getName());
        MigrationConfig config = new ConfigLoader(System.getenv()).load(null, base);

        List<Slot> slots = hoursBefore(END, a.hours());
        try (DynamoDbClient dynamo = DynamoClients.create(config.target(), a.endpoint(), a.threads() * 4, List.of())) {
            SourceTable source = prepare(config, dynamo, a.endpoint(), a.rows(), a.hours());
            String t = config.target().table();

            Verifier verifier = new Verifier(config, source, dynamo, InFlight.settle(Duration.ZERO));
            List<Double> serverS = new ArrayList<>();
            List<Double> serverCpu = new ArrayList<>();
            List<Double> hourlyS = new ArrayList<>();
            List<Double> hourlyCpu = new ArrayList<>();
            List<List<Slot>> spans = verifier.spans(slots, a.threads());
            System.out.printf("%d hours in %d spans, one query each (what verify does)%n", a.hours(), spans.size());
            List<Double> md5Cpu = new ArrayList<>();
            Md5Baseline md5 = new Md5Baseline(source);
            List<Double> naiveS = new ArrayList<>();
            List<Double> verifierRate = new ArrayList<>();
            List<Double> ceilingRate = new ArrayList<>();
            long serverBytes = 0;
            long naiveBytes = 0;
            // warm-up, untimed: both JVMs' JIT and DynamoDB Local's page cache, for every phase alike
            List<Slot> few = slots.subList(0, Math.min(12, slots.size()));
            NaiveHasher warm = new NaiveHasher(source, config, verifier);
            perSlot(few, a.threads(), verifier::open, verifier::postgresSide);
            perSpan(verifier.spans(few, a.threads()), a.threads(), verifier::open, verifier::postgresSide);
            perSlot(few, a.threads(), verifier::open, warm::fingerprint);
            perSpan(verifier.spans(few, a.threads()), a.threads(), verifier::open, md5::sum);
            perSlot(few, a.threads(), () -> null, (c, s) -> verifier.dynamoSide(s));
            rawQueries(dynamo, t, few, a.threads());
            for (int rep = 1; rep <= a.reps(); rep++) {
                // spans and a query an hour alternate which goes first, so neither always meets a warmer cache
                Map<Slot, Fingerprint> server = null;
                Map<Slot, Fingerprint> hourly = null;
                for (int phase = 0; phase < 2; phase++) {
                    if ((phase + rep) % 2 == 1) {
                        long b0 = CountingSocketFactory.RECEIVED.get();
                        CpuMeter.Sample c0 = CpuMeter.sample();
                        long t1 = System.nanoTime();
                        server = perSpan(spans, a.threads(), verifier::open, verifier::postgresSide);
                        serverS.add((System.nanoTime() - t1) / 1e9);
                        serverCpu.add(CpuMeter.seconds(c0, CpuMeter.sample(), "Postgres"));
                        serverBytes = CountingSocketFactory.RECEIVED.get() - b0;
                        for (Slot slot : slots) server.putIfAbsent(slot, Fingerprint.EMPTY);
                    } else {
                        CpuMeter.Sample ch = CpuMeter.sample();
                        long th = System.nanoTime();
                        hourly = perSlot(slots, a.threads(), verifier::open, verifier::postgresSide);
                        hourlyS.add((System.nanoTime() - th) / 1e9);
                        hourlyCpu.add(CpuMeter.seconds(ch, CpuMeter.sample(), "Postgres"));
                    }
                }
                if (!hourly.equals(server)) throw new IllegalStateException("span and hourly fingerprints differ");

                CpuMeter.Sample c1 = CpuMeter.sample();
                Map<Slot, Fingerprint> sums = perSpan(spans, a.threads(), verifier::open, md5::sum);
                md5Cpu.add(CpuMeter.seconds(c1, CpuMeter.sample(), "Postgres"));
                long summed =
                        sums.values().stream().mapToLong(Fingerprint::count).sum();
                if (summed != a.rows()) throw new IllegalStateException("md5 baseline counted " + summed + " rows");

                NaiveHasher naive = new NaiveHasher(source, config, verifier);
                long b1 = CountingSocketFactory.RECEIVED.get();
                long t2 = System.nanoTime();
                Map<Slot, Fingerprint> client = perSlot(slots, a.threads(), verifier::open, naive::fingerprint);
                naiveS.add((System.nanoTime() - t2) / 1e9);
                naiveBytes = CountingSocketFactory.RECEIVED.get() - b1;
                if (!server.equals(client)) throw new IllegalStateException("server and client fingerprints differ");

                // the two DynamoDB phases alternate which goes first, so neither always meets a warmer cache
                for (int phase = 0; phase < 2; phase++) {
                    if ((phase + rep) % 2 == 0) {
                        long t3 = System.nanoTime();
                        Map<Slot, Fingerprint> items =
                                perSlot(slots, a.threads(), () -> null, (c, s) -> verifier.dynamoSide(s));
                        verifierRate.add(a.rows() / ((System.nanoTime() - t3) / 1e9));
                        if (!items.equals(server))
                            throw new IllegalStateException("DynamoDB and Postgres fingerprints differ");
                    } else {
                        long t4 = System.nanoTime();
                        long counted = rawQueries(dynamo, t, slots, a.threads());
                        ceilingRate.add(a.rows() / ((System.nanoTime() - t4) / 1e9));
                        if (counted != a.rows()) throw new IllegalStateException("ceiling read " + counted + " items");
                    }
                }
                System.out.printf(
                        "  run %d: postgres server-side %.1f s, %,d B, %.1f s of Postgres CPU (a query an hour %.1f s,"
                                + " %.1f s"
                                + " CPU; md5 baseline %.1f s);"
                                + " naive %.1f s, %,d B; dynamodb verifier %,.0f items/s, ceiling %,.0f items/s%n",
                        rep,
                        serverS.get(rep - 1),
                        serverBytes,
                        serverCpu.get(rep - 1),
                        hourlyS.get(rep - 1),
                        hourlyCpu.get(rep - 1),
                        md5Cpu.get(rep - 1),
                        naiveS.get(rep - 1),
                        naiveBytes,
                        verifierRate.get(rep - 1),
                        ceilingRate.get(rep - 1));
            }
            double s = CopyBenchmark.median(serverS);
            double n = CopyBenchmark.median(naiveS);
            double v = CopyBenchmark.median(verifierRate);
            double x = CopyBenchmark.median(ceilingRate);
            System.out.println();
            System.out.printf(
                    "rows %,d over %d slots; %d runs; %d threads; medians:%n",
                    a.rows(), a.hours(), a.reps(), a.threads());
            System.out.printf(
                    "  postgres, server-side fingerprint   %,14d bytes  %6.1f s   %s%n", serverBytes, s, serverS);
            System.out.printf(
                    "  postgres, naive (rows to client)    %,14d bytes  %6.1f s   %s%n", naiveBytes, n, naiveS);
            double sc = CopyBenchmark.median(serverCpu);
            double mc = CopyBenchmark.median(md5Cpu);
            System.out.printf("  postgres CPU, server-side fingerprint %6.2f s   %s%n", sc, serverCpu);
            System.out.printf("  postgres CPU, md5(row::text) sum      %6.2f s   %s%n", mc, md5Cpu);
            double hs = CopyBenchmark.median(hourlyS);
            double hc = CopyBenchmark.median(hourlyCpu);
            System.out.printf(
                    "  postgres, a query an hour (before)  %6.1f s, %6.2f s CPU   %s %s%n", hs, hc, hourlyS, hourlyCpu);
            System.out.printf("  spans / a query an hour: %.2fx the rows/s, %.2fx the CPU%n", hs / s, sc / hc);
            System.out.printf("  fingerprint CPU / md5 CPU = %.2fx   (goal <= 2x)%n", sc / mc);
            System.out.printf(
                    "  server-side fingerprint %,.0f rows/s; recorded before the jsonb-text encoding %,.0f rows/s"
                            + " (1,000,000 rows in 14.9 s): %.1fx   (goal >= 4x)%n",
                    a.rows() / s, RECORDED_ROWS_PER_S, a.rows() / s / RECORDED_ROWS_PER_S);
            System.out.printf(
                    "  bytes naive / server-side = %,.0fx   (goal >= 100x); time naive / server-side = %.2fx%n",
                    (double) naiveBytes / serverBytes, n / s);
            System.out.printf("  dynamodb, verifier (query + hash)   %,10.0f items/s   %s%n", v, verifierRate);
            System.out.printf("  dynamodb, raw query ceiling         %,10.0f items/s   %s%n", x, ceilingRate);
            System.out.printf("  verifier / ceiling = %.0f%%   (goal >= 80%%)%n", 100 * v / x);
            dynamo.deleteTable(b -> b.tableName(t));
        }
    }

    /** The generated rows' times lie in the hours before this. */
    static final Instant END = Instant.parse("2024-10-20T00:00:00Z");

    /** The {@code hours} hours before {@code end}, newest first. */
    static List<Slot> hoursBefore(Instant end, int hours) {
        List<Slot> slots = new ArrayList<>();
        for (Slot s = Slot.containing(end.minusMillis(1)); slots.size() < hours; s = s.older()) slots.add(s);
        return slots;
    }

    /**
     * Generates {@link #TABLE} ({@code rows} over the {@code hours} before {@link #END}, vacuumed and analyzed now, so
     * autovacuum does not run during a measured phase) and loads its items into a new DynamoDB table, {@code
     * target.table}, with the slot index, as the copy would write them.
     */
    static SourceTable prepare(MigrationConfig config, DynamoDbClient dynamo, String endpoint, int rows, int hours)
            throws Exception {
        System.out.printf("generating %,d rows over %d hours in %s%n", rows, hours, TABLE);
        try (Connection c = new SourceSession(config.source()).open();
                Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS " + TABLE);
            RoomEventsGenerator.create(c, TABLE, rows, END, hours, 3);
            st.execute("VACUUM ANALYZE " + TABLE);
        }
        SourceTable source;
        try (Connection c = new SourceSession(config.source()).open()) {
            source = SourceTable.inspect(c, config);
        }
        String t = config.target().table();
        if (TargetTable.exists(dynamo, t, endpoint)) dynamo.deleteTable(b -> b.tableName(t));
        TargetTable.create(dynamo, t, source.key(), SlotIndex.of(config.target()));
        long t0 = System.nanoTime();
        CopyBenchmark.rawBatchWrites(CopyBenchmark.allItems(config, source.codec(config.target())), dynamo, t, 8);
        System.out.printf("loaded %,d items into %s in %.0f s%n", rows, t, (System.nanoTime() - t0) / 1e9);
        return source;
    }

    /** bench/README.md, 2026-11-21: the plpgsql json canonical form, 1,000,000 rows in 14.9 s on 4 threads. */
    static final double RECORDED_ROWS_PER_S = 1_000_000 / 14.9;

    /** The cheapest exact hash of the same rows: {@code md5(row::text)} summed per span, over the same spans. */
    static final class Md5Baseline {
        private final SourceTable source;

        Md5Baseline(SourceTable source) {
            this.source = source;
        }

        /** One sum over the span's rows (no hour told apart: cheaper than what it is compared to), under its oldest. */
        Map<Slot, Fingerprint> sum(Connection c, List<Slot> span) throws Exception {
            String sql = "SELECT count(*), coalesce(sum(('x' || substr(md5(r::text), 1, 16))::bit(64)::int8), 0)::text"
                    + " FROM " + source.name() + " r WHERE " + source.keyspace().predicate();
            Slot oldest = span.stream().min(Slot::compareTo).orElseThrow();
            Slot newest = span.stream().max(Slot::compareTo).orElseThrow();
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setObject(1, source.keyspace().hourBounds(oldest)[0]);
                ps.setObject(2, source.keyspace().hourBounds(newest)[1]);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return Map.of(oldest, Fingerprint.ofSql(rs.getLong(1), rs.getString(2)));
                }
            }
        }
    }

    interface Opener {
        Connection open() throws Exception;
    }

    interface PerSlot {
        Fingerprint run(Connection c, Slot slot) throws Exception;
    }

    interface PerSpan {
        Map<Slot, Fingerprint> run(Connection c, List<Slot> span) throws Exception;
    }

    /** Runs {@code work} for every slot on {@code threads} threads, each with its own connection. */
    static Map<Slot, Fingerprint> perSlot(List<Slot> slots, int threads, Opener opener, PerSlot work) throws Exception {
        List<List<Slot>> alone = slots.stream().map(List::of).toList();
        return perSpan(alone, threads, opener, (c, span) -> Map.of(span.get(0), work.run(c, span.get(0))));
    }

    /** Runs {@code work} for every span on {@code threads} threads, each with its own connection. */
    static Map<Slot, Fingerprint> perSpan(List<List<Slot>> spans, int threads, Opener opener, PerSpan work)
            throws Exception {
        ConcurrentLinkedQueue<List<Slot>> queue = new ConcurrentLinkedQueue<>(spans);
        Map<Slot, Fingerprint> out = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<?>> all = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            all.add(pool.submit(() -> {
                Connection c = opener.open();
                try {
                    for (List<Slot> s = queue.poll(); s != null; s = queue.poll()) out.putAll(work.run(c, s));
                } finally {
                    if (c != null) c.close();
                }
                return null;
            }));
        }
        for (Future<?> f : all) f.get();
        pool.shutdown();
        return out;
    }

    /** The naive way: every row of the slot to the client, encoded and hashed there. */
    static final class NaiveHasher {
        private final PageReader reader;
        private final RowCodec codec;
        private final CanonicalItem canonical;
        private final Verifier verifier;

        NaiveHasher(SourceTable source, MigrationConfig config, Verifier verifier) {
            this.verifier = verifier;
            this.reader = new PageReader(source);
            this.codec = source.codec(config.target());
            this.canonical = new CanonicalItem(source.columns(), "id", "id", "_slot", true);
        }

        Fingerprint fingerprint(Connection c, Slot slot) throws Exception {
            Fingerprint fp = Fingerprint.EMPTY;
            String last = null;
            while (true) {
                List<SourceRow> page = reader.page(c, slot, last, 5_000);
                for (SourceRow row : page) fp = fp.plus(verifier.rowHash(canonical.encode(codec.encode(row))));
                if (page.size() < 5_000) return fp;
                last = page.get(page.size() - 1).key();
            }
        }
    }

    /** The same Query pages as the verifier, on the same threads, counting items and nothing else. */
    static long rawQueries(DynamoDbClient dynamo, String table, List<Slot> slots, int threads) throws Exception {
        AtomicLong items = new AtomicLong();
        perSlot(slots, threads, () -> null, (c, slot) -> {
            Map<String, AttributeValue> start = null;
            do {
                Map<String, AttributeValue> from = start;
                QueryResponse page = dynamo.query(b -> b.tableName(table)
                        .indexName("by_slot")
                        .keyConditionExpression("#s = :s")
                        .expressionAttributeNames(Map.of("#s", "_slot"))
                        .expressionAttributeValues(Map.of(":s", AttributeValue.fromS(slot.name())))
                        .exclusiveStartKey(from));
                items.addAndGet(page.count());
                start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty()
                        ? page.lastEvaluatedKey()
                        : null;
            } while (start != null);
            return Fingerprint.EMPTY;
        });
        return items.get();
    }

    private VerifyBenchmark() {}
}
