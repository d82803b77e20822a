package io.rebalance.bench;

import io.debezium.embedded.Connect;
import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import io.rebalance.cdc.Tail;
import io.rebalance.cdc.TailPreflight;
import io.rebalance.core.codec.RowCodec;
import io.rebalance.core.config.ConfigLoader;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.DynamoClients;
import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.dynamo.TargetTable;
import io.rebalance.core.redis.RedisConnector;
import io.rebalance.core.slot.KeyType;
import io.rebalance.core.slot.Ulid;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.local.RoomEventsGenerator;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.connect.source.SourceRecord;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
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
 * <p><b>Latency.</b> With a tail caught up, inserts at a steady rate; every 10th is polled for with GetItem
 * (consistent) until its item is there: commit returned to item readable. The baseline is the same probe on items
 * written straight to DynamoDB with PutItem at the same rate: the floor the probe itself imposes.
 *
 * <p>Arguments: endpoint changes reps rate seconds.
 */
public final class TailBenchmark {
    private static final String TABLE = "bench_tail_events";
    private static final String PUBLICATION = "bench_tail_pub";
    private static final int TXN = 5_000;

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
        try (UnifiedJedis redis = RedisConnector.connect(config.redis().url(), 2)) {
            for (String k : io.rebalance.core.redis.RedisScan.keys(redis, "bench:tail:")) redis.del(k); // old offsets
        }
        try (Connection c = session.open();
                Statement st = c.createStatement()) {
            cleanSlots(st);
            st.execute("DROP PUBLICATION IF EXISTS " + PUBLICATION);
            st.execute("DROP TABLE IF EXISTS " + TABLE);
            RoomEventsGenerator.create(c, TABLE, rows, Instant.parse("2024-10-20T00:00:00Z"), 48, 5);
            st.execute("CREATE PUBLICATION " + PUBLICATION + " FOR TABLE " + TABLE);
            for (int r = 1; r <= reps; r++) {
                for (String kind : List.of("dbz", "tail")) {
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
        try (DynamoDbClient dynamo = DynamoClients.create(config.target(), endpoint, threads * 2, List.of());
                UnifiedJedis redis = RedisConnector.connect(config.redis().url(), threads + 8)) {
            List<Map<String, AttributeValue>> items = items(session, source.codec(config.target()), changes);
            for (int r = 1; r <= reps; r++) {
                alone.add(report(
                        "Debezium alone",
                        r,
                        changes,
                        debeziumAlone(
                                config(endpoint, TABLE, "bench:tail:a" + r + ":", "bench_dbz_" + r),
                                source,
                                id,
                                changes,
                                dynamo,
                                redis)));
                tail.add(report(
                        "tail",
                        r,
                        changes,
                        tail(
                                config(endpoint, "bench_tail_t" + r, "bench:tail:t" + r + ":", "bench_tail_" + r),
                                source,
                                changes,
                                dynamo,
                                redis)));
                ceiling.add(report("ceiling", r, changes, ceiling(dynamo, "bench_tail_c" + r, items, threads)));
            }
            double a = median(alone), t = median(tail), x = median(ceiling);
            System.out.println();
            System.out.printf("draining %,d changes; %d runs each; medians (changes/s):%n", changes, reps);
            System.out.printf("  Debezium alone (no-op handler)        %,10.0f   %s%n", a, alone);
            System.out.printf("  rebalance tail (%d apply threads)      %,10.0f   %s%n", threads, t, tail);
            System.out.printf("  raw BatchWriteItem ceiling (%d t)      %,10.0f   %s%n", threads, x, ceiling);
            System.out.printf("  tail / Debezium alone = %.0f%%%n", 100 * t / a);
            System.out.printf("  tail / ceiling        = %.0f%%%n", 100 * t / x);
            System.out.printf(
                    "  tail / min(Debezium alone, ceiling) = %.0f%%   (goal >= 80%%)%n", 100 * t / Math.min(a, x));

            latency(endpoint, source, dynamo, redis, rate, seconds);
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

    private static double debeziumAlone(
            MigrationConfig config,
            SourceTable source,
            TailPreflight.TableId id,
            int changes,
            DynamoDbClient dynamo,
            UnifiedJedis redis)
            throws Exception {
        Properties p = new Tail(config, source, dynamo, redis, "bench").properties(id);
        p.setProperty("offset.storage", "org.apache.kafka.connect.storage.MemoryOffsetBackingStore");
        String topic = "rebalance." + id.dotted();
        AtomicLong seen = new AtomicLong();
        CountDownLatch drained = new CountDownLatch(1);
        long start = System.nanoTime();
        try (DebeziumEngine<ChangeEvent<SourceRecord, SourceRecord>> engine = DebeziumEngine.create(Connect.class)
                .using(p)
                .notifying((events, committer) -> {
                    for (ChangeEvent<SourceRecord, SourceRecord> e : events) {
                        if (e.value() != null && topic.equals(e.value().topic())) seen.incrementAndGet();
                        committer.markProcessed(e);
                    }
                    committer.markBatchFinished();
                    if (seen.get() >= changes) drained.countDown();
                })
                .build()) {
            ExecutorService runner = Executors.newSingleThreadExecutor();
            runner.execute(engine);
            drained.await();
            double rate = changes / ((System.nanoTime() - start) / 1e9);
            runner.shutdown();
            return rate;
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
                    Map<String, List<WriteRequest>> request = Map.of(t, batch);
                    while (!request.isEmpty()) {
                        Map<String, List<WriteRequest>> sent = request;
                        request =
                                dynamo.batchWriteItem(b -> b.requestItems(sent)).unprocessedItems();
                    }
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
                rows.add(codec.encode(new io.rebalance.core.codec.SourceRow((String) v[0], v)));
            }
        }
        List<Map<String, AttributeValue>> out = new ArrayList<>(n);
        while (out.size() < n) out.addAll(rows.subList(0, Math.min(rows.size(), n - out.size())));
        return out;
    }

    /** p50 and p99 commit-to-item latency of the tail at {@code rate} inserts/s, and the probe's own floor. */
    private static void latency(
            String endpoint, SourceTable source, DynamoDbClient dynamo, UnifiedJedis redis, int rate, int seconds)
            throws Exception {
        MigrationConfig config = config(endpoint, "bench_tail_latency", "bench:tail:l:", "bench_latency");
        String t = config.target().table();
        TargetTable.create(dynamo, t, "id", KeyType.TEXT, SlotIndex.of(config.target()));
        SourceSession session = new SourceSession(config.source());
        List<Long> viaTail;
        List<Long> floor;
        // Debezium alone on a slot of its own, at the same time: commit to delivery, the stream's share of the latency
        MigrationConfig aloneConfig = config(endpoint, t, "bench:tail:la:", "bench_latency_dbz");
        TailPreflight.TableId id;
        try (Connection c = session.open()) {
            id = TailPreflight.check(c, source, aloneConfig);
        }
        Properties p = new Tail(aloneConfig, source, dynamo, redis, "bench").properties(id);
        p.setProperty("offset.storage", "org.apache.kafka.connect.storage.MemoryOffsetBackingStore");
        String topic = "rebalance." + id.dotted();
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
        try (Tail tail = new Tail(config, source, dynamo, redis, "bench-latency")) {
            ExecutorService runner = Executors.newSingleThreadExecutor();
            runner.submit(() -> {
                tail.run();
                return null;
            });
            while (true) { // streaming once the slot is read
                try (Connection c = session.open()) {
                    if (TailPreflight.slot(c, "bench_latency").active()
                            && TailPreflight.slot(c, "bench_latency_dbz").active()) break;
                }
                Thread.sleep(100); // the tail is starting Debezium
            }
            viaTail = probe(rate, seconds, dynamo, t, n -> {
                try (Connection c = session.open();
                        PreparedStatement ps = c.prepareStatement(
                                "INSERT INTO " + TABLE + " VALUES (?, gen_random_uuid(), 'latency', NULL, now(), 0)")) {
                    ps.setString(1, n);
                    ps.executeUpdate();
                }
            });
            tail.close();
            runner.shutdown();
        }
        alone.close();
        aloneRunner.shutdown();
        Collections.sort(delivered);
        floor = probe(
                rate,
                seconds,
                dynamo,
                t,
                n -> dynamo.putItem(b -> b.tableName(t)
                        .item(Map.of("id", AttributeValue.fromS(n), "_slot", AttributeValue.fromS("x")))));
        dynamo.deleteTable(b -> b.tableName(t));
        try (Connection c = session.open();
                Statement st = c.createStatement()) {
            Thread.sleep(2_000); // Debezium's replication connections are closing; cleanSlots skips active slots
            cleanSlots(st);
        }
        System.out.println();
        System.out.printf(
                "commit-to-item latency at %,d writes/s for %d s (every 10th write probed):%n", rate, seconds);
        System.out.printf(
                "  through the tail:        p50 %4d ms   p99 %4d ms   (goal: p99 < 1000 ms)  %,d probes%n",
                pct(viaTail, 50), pct(viaTail, 99), viaTail.size());
        System.out.printf(
                "  Debezium alone, commit to delivery (same writes, own slot, commit time in ms):"
                        + " p50 %4d ms   p99 %4d ms   %,d events%n",
                pct(delivered, 50), pct(delivered, 99), delivered.size());
        System.out.printf(
                "  PutItem direct (probe floor):  p50 %4d ms   p99 %4d ms   %,d probes%n",
                pct(floor, 50), pct(floor, 99), floor.size());
    }

    interface Write {
        void write(String id) throws Exception;
    }

    /** Writes at {@code rate}/s on 4 threads; every 10th id is polled for until readable. @return latencies, ms */
    private static List<Long> probe(int rate, int seconds, DynamoDbClient dynamo, String table, Write write)
            throws Exception {
        List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
        ScheduledExecutorService writers = Executors.newScheduledThreadPool(4);
        ExecutorService probes = Executors.newFixedThreadPool(8);
        AtomicLong n = new AtomicLong();
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        long periodMicros = 4_000_000L / rate;
        List<Future<?>> pending = Collections.synchronizedList(new ArrayList<>());
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
                        long committed = System.nanoTime();
                        if (i % 10 == 0)
                            pending.add(probes.submit(() -> awaitItem(dynamo, table, id, committed, latencies)));
                    },
                    w * periodMicros / 4,
                    periodMicros,
                    TimeUnit.MICROSECONDS);
        }
        while (System.nanoTime() < end) Thread.sleep(100); // the writers run on their schedule until the end
        writers.shutdown();
        writers.awaitTermination(10, TimeUnit.SECONDS);
        for (Future<?> f : new ArrayList<>(pending)) f.get();
        probes.shutdown();
        Collections.sort(latencies);
        return latencies;
    }

    private static Void awaitItem(DynamoDbClient dynamo, String table, String id, long committed, List<Long> out)
            throws InterruptedException {
        Map<String, AttributeValue> key = Map.of("id", AttributeValue.fromS(id));
        while (!dynamo.getItem(b -> b.tableName(table).key(key).consistentRead(true))
                .hasItem()) {
            Thread.sleep(2); // the probe's poll interval: part of the floor it measures
        }
        out.add((System.nanoTime() - committed) / 1_000_000);
        return null;
    }

    private static long pct(List<Long> sorted, int p) {
        return sorted.isEmpty() ? -1 : sorted.get(Math.min(sorted.size() - 1, sorted.size() * p / 100));
    }

    private static double report(String name, int rep, int changes, double rate) {
        System.out.printf("  %-15s run %d: %,d changes at %,8.0f /s%n", name, rep, changes, rate);
        return rate;
    }

    static double median(List<Double> xs) {
        List<Double> s = new ArrayList<>(xs);
        Collections.sort(s);
        return s.get(s.size() / 2);
    }
}
