package io.rebalance.bench;

import io.debezium.embedded.Connect;
import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import io.rebalance.cdc.StageTimes;
import io.rebalance.cdc.Tail;
import io.rebalance.cdc.TailPreflight;
import io.rebalance.core.codec.RowCodec;
import io.rebalance.core.codec.SourceRow;
import io.rebalance.core.config.ConfigLoader;
import io.rebalance.core.config.Durations;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.DynamoClients;
import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.dynamo.TargetTable;
import io.rebalance.core.redis.RedisConnector;
import io.rebalance.core.redis.RedisScan;
import io.rebalance.core.slot.KeyType;
import io.rebalance.core.slot.Ulid;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.local.RoomEventsGenerator;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.connect.source.SourceRecord;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.KeysAndAttributes;
import software.amazon.awssdk.services.dynamodb.model.PutRequest;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * The tail's throughput and latency, each against a baseline measured in the same run, repeated, as medians.
 *
 * <p><b>Backlog.</b> One publication and, before any change is made, two replication slots per repetition; then a
 * backlog of changes in transactions of 5,000 (updates of every row, then updates and deletes). Each repetition
 * drains the same backlog three ways:
 * <ul>
 *   <li><b>Debezium alone</b>: the tail's own connector settings, offsets in memory, a handler that only marks the
 *       events processed: how fast Debezium delivers the backlog here;
 *   <li><b>tail</b>: {@code Tail} as {@code rebalance tail} runs it (offsets and lease in Redis, no run plan, so
 *       every key is recorded for reconciliation: the costlier case), into a fresh table;
 *   <li><b>ceiling</b>: BatchWriteItem of 25 with items built beforehand on {@code tail.applyThreads} threads, as
 *       many items as changes: what DynamoDB Local itself takes here.
 * </ul>
 *
 * <p><b>Latency.</b> With a tail caught up, inserts at a steady rate on 4 connections; every 10th is watched for
 * with one consistent BatchGetItem every 10 ms until its item is there: commit returned to item readable. Two baselines follow, each
 * alone: Debezium alone on the same writes (commit time to delivery), and the same probe on items written straight
 * to DynamoDB with PutItem at the same rate (the floor the probe itself imposes).
 *
 * <p>Each line also gives the cores each process group kept busy ({@link CpuMeter}): on a small machine, Debezium,
 * Postgres's WAL decoding and DynamoDB Local share the same cores, and this shows which limit a figure hit.
 *
 * <p>Arguments: endpoint changes reps rate seconds.
 */
public final class TailBenchmark {
    private static final String TABLE = "bench_tail_events";
    private static final String PUBLICATION = "bench_tail_pub";
    private static final int TXN = 5_000;
    /** One write in this many is watched for. */
    private static final int PROBE_EVERY = 10;
    /** Writes before the probing starts: the stream, the connections and the JIT settle at the rate first. */
    private static final int STEADY_AFTER_S = 5;
    /** How often the watcher looks for the probed items: the resolution of the latency figures. */
    private static final long WATCH_EVERY_MS = 10;

    public static void main(String[] args) throws Exception {
        String endpoint = args[0];
        int changes = Integer.parseInt(args[1]);
        int reps = Integer.parseInt(args[2]);
        int rate = Integer.parseInt(args[3]);
        int seconds = Integer.parseInt(args[4]);
        MigrationConfig config = config(endpoint, "bench_tail_x", "bench:tail:x:", "x");
        SourceSession session = new SourceSession(config.source());
        int rows = changes / 2;

        System.out.printf("backlog: %,d changes on %,d rows, %d repetitions%n", changes, rows, reps);
        try (UnifiedJedis redis = RedisConnector.connect(config.redis(), 2)) {
            for (String k : RedisScan.keys(redis, "bench:tail:")) redis.del(k); // old offsets
        }
        try (Connection c = session.open();
                Statement st = c.createStatement()) {
            cleanSlots(st);
            st.execute("DROP PUBLICATION IF EXISTS " + PUBLICATION);
            st.execute("DROP TABLE IF EXISTS " + TABLE);
            RoomEventsGenerator.create(c, TABLE, rows, Instant.parse("2024-10-20T00:00:00Z"), 48, 5);
            st.execute("CREATE PUBLICATION " + PUBLICATION + " FOR TABLE " + TABLE);
            for (int r = 1; r <= reps; r++) {
                for (String kind : List.of("dbz", "tail", "dbzw")) {
                    st.execute("SELECT pg_create_logical_replication_slot('bench_" + kind + "_" + r + "', 'pgoutput')");
                }
            }
            long t0 = System.nanoTime();
            makeBacklog(c, rows);
            System.out.printf("  made in %.1f s%n", (System.nanoTime() - t0) / 1e9);
        }
        SourceTable source;
        try (Connection c = session.open()) {
            source = SourceTable.inspect(c, config);
        }
        TailPreflight.TableId id;
        try (Connection c = session.open()) {
            id = TailPreflight.check(c, source, config);
        }
        int threads = config.tail().applyThreads();
        List<Double> alone = new ArrayList<>();
        List<Double> tail = new ArrayList<>();
        List<Double> ceiling = new ArrayList<>();
        List<Double> shared = new ArrayList<>();
        try (DynamoDbClient dynamo = DynamoClients.create(config.target(), endpoint, threads * 2, List.of());
                UnifiedJedis redis = RedisConnector.connect(config.redis(), threads + 8)) {
            List<Map<String, AttributeValue>> items = items(session, source.codec(config.target()), changes);
            // DynamoDB Local compiles its hot paths during its first minute: whichever drain came first would pay
            measured("warm-up", 0, items.size(), () -> ceiling(dynamo, "bench_tail_warmup", items, threads));
            for (int r = 1; r <= reps; r++) {
                int rep = r;
                alone.add(measured(
                        "Debezium alone",
                        r,
                        changes,
                        () -> debeziumInto(
                                config(endpoint, TABLE, "bench:tail:a" + rep + ":", "bench_dbz_" + rep),
                                source,
                                id,
                                changes,
                                dynamo,
                                redis,
                                n -> {})));
                tail.add(measured(
                        "tail",
                        r,
                        changes,
                        () -> tail(
                                config(endpoint, "bench_tail_t" + rep, "bench:tail:t" + rep + ":", "bench_tail_" + rep),
                                source,
                                changes,
                                dynamo,
                                redis)));
                ceiling.add(
                        measured("ceiling", r, changes, () -> ceiling(dynamo, "bench_tail_c" + rep, items, threads)));
                shared.add(measured("Debezium+writes", r, changes, () -> {
                    String t = "bench_tail_w" + rep;
                    TargetTable.create(dynamo, t, "id", KeyType.TEXT, new SlotIndex("by_slot", "_slot"));
                    double drained = debeziumInto(
                            config(endpoint, TABLE, "bench:tail:w" + rep + ":", "bench_dbzw_" + rep),
                            source,
                            id,
                            changes,
                            dynamo,
                            redis,
                            new RawWrites(dynamo, t, items, threads));
                    dynamo.deleteTable(b -> b.tableName(t));
                    return drained;
                }));
                dropSlots(session, "bench_dbz_" + r, "bench_tail_" + r, "bench_dbzw_" + r); // Postgres allows 10
            }
            double a = median(alone), t = median(tail), x = median(ceiling), w = median(shared);
            System.out.println();
            System.out.printf("draining %,d changes; %d runs each; medians (changes/s):%n", changes, reps);
            System.out.printf("  Debezium alone (no-op handler)          %,10.0f   %s%n", a, alone);
            System.out.printf("  raw BatchWriteItem ceiling (%2d t)       %,10.0f   %s%n", threads, x, ceiling);
            System.out.printf("  Debezium + raw BatchWriteItem (%2d t)    %,10.0f   %s%n", threads, w, shared);
            System.out.printf("  rebalance tail (%2d apply threads)       %,10.0f   %s%n", threads, t, tail);
            System.out.printf(
                    "  tail / min(Debezium alone, ceiling) = %3.0f%%   (the issue's goal: >= 80%%)%n",
                    100 * t / Math.min(a, x));
            System.out.printf(
                    "  tail / (Debezium + raw writes)      = %3.0f%%   (both on the same cores, as here)%n",
                    100 * t / w);

            latency(endpoint, source, dynamo, redis, rate, seconds, reps);
        } finally {
            try (Connection c = session.open();
                    Statement st = c.createStatement()) {
                cleanSlots(st);
                st.execute("DROP PUBLICATION IF EXISTS " + PUBLICATION);
            }
        }
    }

    static MigrationConfig config(String endpoint, String target, String prefix, String slot) {
        Map<String, String> o = new HashMap<>();
        o.put("source.table", TABLE);
        o.put("target.table", target);
        o.put("target.endpoint", endpoint);
        o.put("redis.prefix", prefix);
        o.put("tail.slotName", slot);
        o.put("tail.publication", PUBLICATION);
        return new ConfigLoader(System.getenv()).load(null, o);
    }

    /** Drops slots once no replication connection reads them any more (a closed engine's goes within moments). */
    private static void dropSlots(SourceSession session, String... slots) throws Exception {
        try (Connection c = session.open();
                Statement st = c.createStatement()) {
            for (String slot : slots) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (TailPreflight.slot(c, slot).active() && System.nanoTime() < deadline) {
                    Thread.sleep(100); // the walsender of a closed engine is exiting
                }
                st.execute("SELECT pg_drop_replication_slot('" + slot + "')");
            }
        }
    }

    private static void cleanSlots(Statement st) throws Exception {
        st.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots"
                + " WHERE slot_name LIKE 'bench\\_%' AND NOT active");
    }

    /** Every row updated, then every row updated again or (one in ten) deleted: 2 changes per row. */
    private static void makeBacklog(Connection c, int rows) throws Exception {
        List<String> bounds = new ArrayList<>(); // the first id of every TXN rows, so each transaction is a key range
        try (Statement st = c.createStatement();
                var rs = st.executeQuery("SELECT id FROM " + TABLE + " ORDER BY id")) {
            for (int i = 0; rs.next(); i++) if (i % TXN == 0) bounds.add(rs.getString(1));
        }
        c.setAutoCommit(false);
        try {
            for (int round = 1; round <= 2; round++) {
                for (int b = 0; b < bounds.size(); b++) {
                    String range = " WHERE id >= '" + bounds.get(b) + "'"
                            + (b + 1 < bounds.size() ? " AND id < '" + bounds.get(b + 1) + "'" : "");
                    try (Statement st = c.createStatement()) {
                        if (round == 1) {
                            st.execute("UPDATE " + TABLE + " SET kind = 'edit', seq = seq + 1" + range);
                        } else {
                            st.execute("DELETE FROM " + TABLE + range + " AND seq % 10 = 0");
                            st.execute("UPDATE " + TABLE + " SET kind = 'reaction', seq = seq + 1" + range);
                        }
                    }
                    c.commit();
                }
            }
        } finally {
            c.setAutoCommit(true);
        }
    }

    /** What a drain does with the number of table changes in each batch Debezium hands over. */
    interface Sink extends AutoCloseable {
        void accept(int changes) throws InterruptedException;

        /** Returns once everything accepted is done. */
        @Override
        default void close() throws Exception {}
    }

    /** Debezium alone with the tail's settings, offsets in memory, each batch's count given to {@code sink}. */
    private static double debeziumInto(
            MigrationConfig config,
            SourceTable source,
            TailPreflight.TableId id,
            int changes,
            DynamoDbClient dynamo,
            UnifiedJedis redis,
            Sink sink)
            throws Exception {
        Tail settings = new Tail(config, source, dynamo, redis, "bench");
        Properties p = settings.properties(id);
        p.setProperty("offset.storage", "org.apache.kafka.connect.storage.MemoryOffsetBackingStore");
        String topic = settings.topic(id);
        AtomicLong seen = new AtomicLong();
        CountDownLatch drained = new CountDownLatch(1);
        long start = System.nanoTime();
        try (DebeziumEngine<ChangeEvent<SourceRecord, SourceRecord>> engine = DebeziumEngine.create(Connect.class)
                .using(p)
                .notifying((events, committer) -> {
                    int n = 0;
                    for (ChangeEvent<SourceRecord, SourceRecord> e : events) {
                        if (e.value() != null && topic.equals(e.value().topic())) n++;
                        committer.markProcessed(e);
                    }
                    sink.accept(n);
                    committer.markBatchFinished();
                    if (seen.addAndGet(n) >= changes) drained.countDown();
                })
                .build()) {
            ExecutorService runner = Executors.newSingleThreadExecutor();
            runner.execute(engine);
            drained.await();
            sink.close();
            double rate = changes / ((System.nanoTime() - start) / 1e9);
            runner.shutdown();
            return rate;
        }
    }

    /**
     * As many pre-built items as changes in each batch, written with BatchWriteItem on {@code threads} threads while
     * Debezium goes on (at most two calls per thread in flight): a tail with no reads, no Redis and no ordering, the
     * most Debezium and DynamoDB Local do together on this machine's cores.
     */
    private static final class RawWrites implements Sink {
        private final DynamoDbClient dynamo;
        private final String table;
        private final List<Map<String, AttributeValue>> items;
        private final ExecutorService pool;
        private final Semaphore inFlight;
        private final int permits;
        private int next;

        RawWrites(DynamoDbClient dynamo, String table, List<Map<String, AttributeValue>> items, int threads) {
            this.dynamo = dynamo;
            this.table = table;
            this.items = items;
            this.pool = Executors.newFixedThreadPool(threads);
            this.permits = threads * 2;
            this.inFlight = new Semaphore(permits);
        }

        @Override
        public void accept(int changes) throws InterruptedException {
            for (int done = 0; done < changes; done += 25) {
                List<WriteRequest> batch = new ArrayList<>(25);
                for (int i = 0; i < Math.min(25, changes - done); i++) {
                    batch.add(WriteRequest.builder()
                            .putRequest(PutRequest.builder()
                                    .item(items.get(next++ % items.size()))
                                    .build())
                            .build());
                }
                inFlight.acquire();
                pool.execute(() -> {
                    try {
                        writeAll(dynamo, table, batch);
                    } finally {
                        inFlight.release();
                    }
                });
            }
        }

        @Override
        public void close() throws InterruptedException {
            inFlight.acquire(permits);
            pool.shutdown();
        }
    }

    private static void writeAll(DynamoDbClient dynamo, String table, List<WriteRequest> batch) {
        Map<String, List<WriteRequest>> request = Map.of(table, batch);
        while (!request.isEmpty()) {
            Map<String, List<WriteRequest>> sent = request;
            request = dynamo.batchWriteItem(b -> b.requestItems(sent)).unprocessedItems();
        }
    }

    private static double tail(
            MigrationConfig config, SourceTable source, int changes, DynamoDbClient dynamo, UnifiedJedis redis)
            throws Exception {
        String t = config.target().table();
        TargetTable.create(dynamo, t, "id", KeyType.TEXT, SlotIndex.of(config.target()));
        long start = System.nanoTime();
        double rate;
        try (Tail tail = new Tail(config, source, dynamo, redis, "bench-tail")) {
            ExecutorService runner = Executors.newSingleThreadExecutor();
            Future<?> running = runner.submit(() -> {
                tail.run();
                return null;
            });
            while (tail.stats().events() < changes) {
                if (running.isDone()) running.get(); // surfaces why it stopped
                Thread.sleep(20); // polls the count the tail keeps; 20 ms is noise against a minute-long drain
            }
            rate = changes / ((System.nanoTime() - start) / 1e9);
            tail.close();
            runner.shutdown();
        }
        dynamo.deleteTable(b -> b.tableName(t));
        return rate;
    }

    private static double ceiling(DynamoDbClient dynamo, String t, List<Map<String, AttributeValue>> items, int threads)
            throws Exception {
        TargetTable.create(dynamo, t, "id", KeyType.TEXT, new SlotIndex("by_slot", "_slot"));
        AtomicInteger next = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        long start = System.nanoTime();
        List<Future<?>> done = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            done.add(pool.submit(() -> {
                for (int from = next.getAndAdd(25); from < items.size(); from = next.getAndAdd(25)) {
                    List<WriteRequest> batch = new ArrayList<>(25);
                    for (Map<String, AttributeValue> item : items.subList(from, Math.min(items.size(), from + 25))) {
                        batch.add(WriteRequest.builder()
                                .putRequest(PutRequest.builder().item(item).build())
                                .build());
                    }
                    writeAll(dynamo, t, batch);
                }
                return null;
            }));
        }
        for (Future<?> f : done) f.get();
        double rate = items.size() / ((System.nanoTime() - start) / 1e9);
        pool.shutdown();
        dynamo.deleteTable(b -> b.tableName(t));
        return rate;
    }

    /** The table's rows as items, repeated (same items twice, as the backlog writes each key twice) to {@code n}. */
    private static List<Map<String, AttributeValue>> items(SourceSession session, RowCodec codec, int n)
            throws Exception {
        List<Map<String, AttributeValue>> rows = new ArrayList<>();
        try (Connection c = session.open();
                PreparedStatement ps = c.prepareStatement(
                        "SELECT id::text, room_id::text, kind, data::text, created_at::text, seq::text FROM " + TABLE);
                var rs = ps.executeQuery()) {
            while (rs.next()) {
                Object[] v = new Object[6];
                for (int i = 0; i < 6; i++) v[i] = rs.getString(i + 1);
                rows.add(codec.encode(new SourceRow((String) v[0], v)));
            }
        }
        List<Map<String, AttributeValue>> out = new ArrayList<>(n);
        while (out.size() < n) out.addAll(rows.subList(0, Math.min(rows.size(), n - out.size())));
        return out;
    }

    /**
     * p50 and p99 commit-to-item latency of the tail at {@code rate} inserts/s, then two baselines, each alone so
     * none disturbs another: Debezium alone on the same writes (commit to delivery: the stream's own share) and the
     * probe on items put straight into DynamoDB (the floor the probe itself imposes).
     */
    private static void latency(
            String endpoint,
            SourceTable source,
            DynamoDbClient dynamo,
            UnifiedJedis redis,
            int rate,
            int seconds,
            int reps)
            throws Exception {
        MigrationConfig config = config(endpoint, "bench_tail_latency", "bench:tail:l:", "bench_latency");
        String t = config.target().table();
        TargetTable.create(dynamo, t, "id", KeyType.TEXT, SlotIndex.of(config.target()));
        SourceSession session = new SourceSession(config.source());
        List<List<Long>> viaTailRuns = new ArrayList<>();
        Map<StageTimes.Stage, StageTimes.Summary> stages;
        CpuMeter.Sample before = CpuMeter.sample();
        try (Tail tail = new Tail(config, source, dynamo, redis, "bench-latency");
                Inserts inserts = new Inserts(session)) {
            ExecutorService runner = Executors.newSingleThreadExecutor();
            runner.submit(() -> {
                tail.run();
                return null;
            });
            awaitStreaming(session, "bench_latency");
            before = CpuMeter.sample();
            tail.stats().stages().clear(); // the stages of the probed writes only
            for (int r = 0; r < reps; r++) viaTailRuns.add(probe(rate, seconds, dynamo, t, inserts::insert));
            stages = tail.stats().stages().summary();
            tail.close();
            runner.shutdown();
        }
        String tailCpu = CpuMeter.between(before, CpuMeter.sample());

        // Debezium alone on a slot of its own, the same writes: commit to delivery
        MigrationConfig aloneConfig = config(endpoint, t, "bench:tail:la:", "bench_latency_dbz");
        TailPreflight.TableId id;
        try (Connection c = session.open()) {
            id = TailPreflight.check(c, source, aloneConfig);
        }
        Tail settings = new Tail(aloneConfig, source, dynamo, redis, "bench");
        Properties p = settings.properties(id);
        p.setProperty("offset.storage", "org.apache.kafka.connect.storage.MemoryOffsetBackingStore");
        String topic = settings.topic(id);
        List<Long> delivered = Collections.synchronizedList(new ArrayList<>());
        DebeziumEngine<ChangeEvent<SourceRecord, SourceRecord>> alone = DebeziumEngine.create(Connect.class)
                .using(p)
                .notifying((events, committer) -> {
                    long now = System.currentTimeMillis();
                    for (ChangeEvent<SourceRecord, SourceRecord> e : events) {
                        SourceRecord r = e.value();
                        if (r != null
                                && topic.equals(r.topic())
                                && r.sourceOffset().get("ts_usec") instanceof Long ts) {
                            delivered.add(now - ts / 1000);
                        }
                        committer.markProcessed(e);
                    }
                    committer.markBatchFinished();
                })
                .build();
        ExecutorService aloneRunner = Executors.newSingleThreadExecutor();
        aloneRunner.execute(alone);
        try (Inserts inserts = new Inserts(session)) {
            awaitStreaming(session, "bench_latency_dbz");
            probe(rate, seconds, null, t, inserts::insert);
        }
        alone.close();
        aloneRunner.shutdown();
        aloneRunner.awaitTermination(30, TimeUnit.SECONDS);
        List<Long> stream = new ArrayList<>(delivered);
        Collections.sort(stream);

        List<Long> floor = probe(
                rate,
                seconds,
                dynamo,
                t,
                n -> dynamo.putItem(b -> b.tableName(t)
                        .item(Map.of("id", AttributeValue.fromS(n), "_slot", AttributeValue.fromS("x")))));
        dynamo.deleteTable(b -> b.tableName(t));
        try (Connection c = session.open();
                Statement st = c.createStatement()) {
            cleanSlots(st);
        }
        System.out.println();
        System.out.printf(
                "commit-to-item latency at %,d writes/s for %d s (every %dth write probed; tail.pollInterval %s):%n",
                rate, seconds, PROBE_EVERY, Durations.format(config.tail().pollInterval()));
        List<Double> p50s = new ArrayList<>();
        List<Double> p99s = new ArrayList<>();
        for (List<Long> run : viaTailRuns) {
            p50s.add((double) pct(run, 50));
            p99s.add((double) pct(run, 99));
            System.out.printf(
                    "  through the tail, run %d:  p50 %4d ms   p99 %4d ms   %,d probes%n",
                    p50s.size(), pct(run, 50), pct(run, 99), run.size());
        }
        System.out.printf(
                "  through the tail, medians: p50 %4.0f ms   p99 %4.0f ms   (goal: p50 <= 25 ms, p99 <= 150 ms)%n",
                median(p50s), median(p99s));
        System.out.printf("    %s%n", tailCpu);
        System.out.printf("  where a batch's time went, over all runs (per batch, ms):%n");
        for (Map.Entry<StageTimes.Stage, StageTimes.Summary> e : stages.entrySet()) {
            StageTimes.Summary x = e.getValue();
            System.out.printf(
                    "    %-15s p50 %7.2f   p99 %7.2f   max %8.2f   %,d batches%n",
                    e.getKey(), x.p50() / 1e3, x.p99() / 1e3, x.max() / 1e3, x.batches());
        }
        System.out.printf(
                "  Debezium alone, commit to delivery (commit time in ms): p50 %4d ms   p99 %4d ms   %,d events%n",
                pct(stream, 50), pct(stream, 99), stream.size());
        System.out.printf(
                "  PutItem direct (probe floor):  p50 %4d ms   p99 %4d ms   %,d probes%n",
                pct(floor, 50), pct(floor, 99), floor.size());
    }

    /** Inserts into the source table, one connection per writer thread (a connection per insert would be the load). */
    private static final class Inserts implements AutoCloseable {
        private final SourceSession session;
        private final List<Connection> opened = Collections.synchronizedList(new ArrayList<>());
        private final ThreadLocal<PreparedStatement> statement = ThreadLocal.withInitial(this::prepare);

        Inserts(SourceSession session) {
            this.session = session;
        }

        void insert(String id) throws Exception {
            PreparedStatement ps = statement.get();
            ps.setString(1, id);
            ps.executeUpdate();
        }

        private PreparedStatement prepare() {
            try {
                Connection c = session.open();
                opened.add(c);
                return c.prepareStatement(
                        "INSERT INTO " + TABLE + " VALUES (?, gen_random_uuid(), 'latency', NULL, now(), 0)");
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public void close() throws Exception {
            for (Connection c : opened) c.close();
        }
    }

    /** Returns once a replication connection reads the slot. */
    private static void awaitStreaming(SourceSession session, String slot) throws Exception {
        while (true) {
            try (Connection c = session.open()) {
                if (TailPreflight.slot(c, slot).active()) return;
            }
            Thread.sleep(100); // Debezium is starting
        }
    }

    interface Write {
        void write(String id) throws Exception;
    }

    /**
     * Writes at {@code rate}/s on 4 threads for {@link #STEADY_AFTER_S} s and then {@code seconds} more; in those,
     * every {@link #PROBE_EVERY}th id is watched for until readable (unless {@code dynamo} is null). One thread looks for every watched id at once with a consistent BatchGetItem every
     * {@link #WATCH_EVERY_MS} ms, so watching costs DynamoDB the same however far behind the tail is (a poll per
     * probe would load it more the later items arrive, and slow the very thing it measures). @return latencies, ms
     */
    private static List<Long> probe(int rate, int seconds, DynamoDbClient dynamo, String table, Write write)
            throws Exception {
        List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
        Map<String, Long> watched = new ConcurrentHashMap<>();
        ScheduledExecutorService writers = Executors.newScheduledThreadPool(4);
        ScheduledExecutorService watcher = Executors.newSingleThreadScheduledExecutor();
        AtomicLong n = new AtomicLong();
        long steady = System.nanoTime() + STEADY_AFTER_S * 1_000_000_000L; // the rate is steady from then
        long end = steady + seconds * 1_000_000_000L;
        long periodMicros = 4_000_000L / rate;
        for (int w = 0; w < 4; w++) {
            writers.scheduleAtFixedRate(
                    () -> {
                        if (System.nanoTime() > end) return;
                        long i = n.incrementAndGet();
                        String id = Ulid.of(Instant.now().toEpochMilli(), 7, i);
                        try {
                            write.write(id);
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                        boolean measuring = System.nanoTime() > steady;
                        if (dynamo != null && measuring && i % PROBE_EVERY == 0) watched.put(id, System.nanoTime());
                    },
                    w * periodMicros / 4,
                    periodMicros,
                    TimeUnit.MICROSECONDS);
        }
        if (dynamo != null) {
            watcher.scheduleWithFixedDelay(
                    () -> look(dynamo, table, watched, latencies),
                    WATCH_EVERY_MS,
                    WATCH_EVERY_MS,
                    TimeUnit.MILLISECONDS);
        }
        while (System.nanoTime() < end) Thread.sleep(100); // the writers run on their schedule until the end
        writers.shutdown();
        writers.awaitTermination(10, TimeUnit.SECONDS);
        long giveUp = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (!watched.isEmpty() && System.nanoTime() < giveUp) Thread.sleep(50); // the watcher finds the rest
        watcher.shutdownNow();
        if (!watched.isEmpty())
            System.out.printf("  %,d probed items never arrived within 2 minutes%n", watched.size());
        Collections.sort(latencies);
        return latencies;
    }

    /** One look for up to 100 watched ids; each one found gets its latency. */
    private static void look(DynamoDbClient dynamo, String table, Map<String, Long> watched, List<Long> out) {
        List<Map<String, AttributeValue>> keys = new ArrayList<>();
        for (String id : watched.keySet()) {
            keys.add(Map.of("id", AttributeValue.fromS(id)));
            if (keys.size() == 100) break; // BatchGetItem's limit
        }
        if (keys.isEmpty()) return;
        var found = dynamo.batchGetItem(b -> b.requestItems(Map.of(
                        table,
                        KeysAndAttributes.builder()
                                .keys(keys)
                                .projectionExpression("id")
                                .consistentRead(true)
                                .build())))
                .responses()
                .getOrDefault(table, List.of());
        long now = System.nanoTime();
        for (Map<String, AttributeValue> item : found) {
            Long committed = watched.remove(item.get("id").s());
            if (committed != null) out.add((now - committed) / 1_000_000);
        }
    }

    private static long pct(List<Long> sorted, int p) {
        return sorted.isEmpty() ? -1 : sorted.get(Math.min(sorted.size() - 1, sorted.size() * p / 100));
    }

    interface Drain {
        double run() throws Exception;
    }

    /** Runs one drain and prints its rate with the CPU each process group used meanwhile. */
    private static double measured(String name, int rep, int changes, Drain drain) throws Exception {
        CpuMeter.Sample before = CpuMeter.sample();
        double rate = drain.run();
        System.out.printf(
                "  %-15s run %d: %,d changes at %,8.0f /s   %s%n",
                name, rep, changes, rate, CpuMeter.between(before, CpuMeter.sample()));
        return rate;
    }

    static double median(List<Double> xs) {
        List<Double> s = new ArrayList<>(xs);
        Collections.sort(s);
        return s.get(s.size() / 2);
    }
}
