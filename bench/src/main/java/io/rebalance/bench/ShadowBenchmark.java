package io.rebalance.bench;

import io.rebalance.client.GuardSettings;
import io.rebalance.client.Router;
import io.rebalance.client.ShadowListener;
import io.rebalance.client.ShadowReads;
import io.rebalance.client.ShadowSettings;
import io.rebalance.core.config.ConfigLoader;
import io.rebalance.core.config.ConfigValidator;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.DynamoClients;
import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.dynamo.TargetTable;
import io.rebalance.core.redis.RedisConnector;
import io.rebalance.core.source.SourceTable;
import io.rebalance.local.DelayProxy;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.route.RouteStatus;
import io.rebalance.protocol.route.RoutingTable;
import io.rebalance.protocol.shadow.ShadowOutcome;
import io.rebalance.verifier.CanonicalReads;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToLongFunction;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.GetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.PutRequest;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * What shadow reads cost the application: reads of a row through {@code Router} at a fixed rate (open loop), from
 * Postgres (the route is SOURCE), in three modes drawn at random for each read inside one run, so every mode meets the
 * same machine: plain (the route looked up with {@code readTarget}, then the application's read: what an application
 * did before), {@code Router.read} at a sample of 0, and {@code Router.read} at a sample of 0.1 with DynamoDB behind a
 * delay proxy (every shadow read slower than the application's own). Three runs; prints each mode's read latency
 * p50/p99 and the DynamoDB reads each made, then the medians of the three and each mode's ratio to plain.
 *
 * <p>Usage: {@code ShadowBenchmark <dynamodb-endpoint> <jdbc-url> <redis-url> <reads-per-second> <seconds>
 * <delay-ms>}
 */
public final class ShadowBenchmark {
    private static final String TABLE = "shadow_bench";
    private static final String PREFIX = "shadowbench:";
    private static final int ROWS = 10_000;
    private static final int RUNS = 3;
    private static final int THREADS = 8;

    private enum Mode {
        PLAIN("plain", TABLE + "_plain"),
        OFF("sample 0", TABLE + "_off"),
        ON("sample 0.1", TABLE + "_on");

        final String label;
        final String scope;

        Mode(String label, String scope) {
            this.label = label;
            this.scope = scope;
        }
    }

    private record Figures(long p50Micros, long p99Micros, long reads, long dynamoReads) {}

    public static void main(String[] args) throws Exception {
        String endpoint = args[0];
        String jdbcUrl = args[1];
        String redisUrl = args[2];
        int rate = Integer.parseInt(args[3]);
        int seconds = Integer.parseInt(args[4]);
        long delayMs = Long.parseLong(args[5]);
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("source.jdbcUrl", jdbcUrl);
        settings.put("source.table", TABLE);
        settings.put("target.table", TABLE);
        settings.put("target.endpoint", endpoint);
        settings.put("redis.url", redisUrl);
        settings.put("redis.prefix", PREFIX);
        MigrationConfig config = ConfigValidator.validate(new ConfigLoader(Map.of()).load(null, settings));
        List<String> keys = new ArrayList<>();
        SourceTable source;
        try (Connection c = DriverManager.getConnection(jdbcUrl, "postgres", "")) {
            try (Statement st = c.createStatement()) {
                st.execute("DROP TABLE IF EXISTS " + TABLE);
            }
            RoomEventsGenerator.create(c, TABLE, ROWS, Instant.parse("2024-10-20T00:00:00Z"), 24, 3);
            source = SourceTable.inspect(c, config);
            try (Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery("SELECT id FROM " + TABLE)) {
                while (rs.next()) keys.add(rs.getString(1));
            }
        }
        CanonicalReads forms = new CanonicalReads(config, source);
        try (DynamoDbClient dynamo = DynamoClients.create(config.target(), endpoint, 4, List.of());
                DelayProxy slow = DelayProxy.start(endpoint, delayMs);
                DynamoDbClient slowDynamo = DynamoClients.create(config.target(), slow.endpoint(), THREADS, List.of());
                UnifiedJedis redis = RedisConnector.connect(config.redis(), THREADS + 8)) {
            load(dynamo, forms, source, config.target(), keys);
            RoutingTable routes = new RoutingTable(redis, new Keyspace(PREFIX));
            for (Mode m : Mode.values()) routes.create(m.scope, RouteStatus.SOURCE, 1);
            routes.setShadowSample(Mode.ON.scope, 0.1);
            System.out.printf(
                    "shadow reads: %d reads/s for %d s per run, %d threads, %d rows; DynamoDB %d ms away for the"
                            + " shadow reads; the three modes drawn at random for each read%n",
                    rate, seconds, THREADS, ROWS, delayMs);
            List<Map<Mode, Figures>> runs = new ArrayList<>();
            for (int i = 0; i < RUNS; i++) {
                Map<Mode, Figures> r = run(redis, forms, source, slowDynamo, keys, rate, seconds);
                for (Mode m : Mode.values()) {
                    Figures f = r.get(m);
                    System.out.printf(
                            "  run %d %-10s %6d reads  p50 %6.2f ms  p99 %6.2f ms  %5d DynamoDB reads%n",
                            i + 1, m.label, f.reads(), f.p50Micros() / 1000.0, f.p99Micros() / 1000.0, f.dynamoReads());
                }
                runs.add(r);
            }
            long p50Plain = median(runs, r -> r.get(Mode.PLAIN).p50Micros());
            long p99Plain = median(runs, r -> r.get(Mode.PLAIN).p99Micros());
            System.out.printf(
                    "median of %d: plain p50 %.2f ms, p99 %.2f ms%n", RUNS, p50Plain / 1000.0, p99Plain / 1000.0);
            for (Mode m : List.of(Mode.OFF, Mode.ON)) {
                long p50 = median(runs, r -> r.get(m).p50Micros());
                long p99 = median(runs, r -> r.get(m).p99Micros());
                System.out.printf(
                        "median of %d: %s p50 %.2f ms (%.2fx plain), p99 %.2f ms (%.2fx plain), DynamoDB reads %d%n",
                        RUNS,
                        m.label,
                        p50 / 1000.0,
                        (double) p50 / Math.max(1, p50Plain),
                        p99 / 1000.0,
                        (double) p99 / Math.max(1, p99Plain),
                        median(runs, r -> r.get(m).dynamoReads()));
            }
            Keyspace keyspace = new Keyspace(PREFIX);
            for (Mode m : Mode.values()) {
                var k = keyspace.scope(m.scope);
                redis.del(k.route(), k.shadowCounts(), k.shadowMismatches());
                redis.srem(keyspace.routes(), m.scope);
            }
        }
        for (Connection c : OPENED) c.close();
        try (Connection c = DriverManager.getConnection(jdbcUrl, "postgres", "");
                Statement st = c.createStatement()) {
            st.execute("DROP TABLE " + TABLE);
        }
    }

    private static Map<Mode, Figures> run(
            UnifiedJedis redis,
            CanonicalReads forms,
            SourceTable source,
            DynamoDbClient slowDynamo,
            List<String> keys,
            int rate,
            int seconds)
            throws Exception {
        int total = rate * seconds;
        long[] micros = new long[total];
        Mode[] modes = Mode.values();
        Mode[] modeOf = BenchSteps.drawn(modes, total);
        Map<Mode, AtomicLong> dynamoReads = new EnumMap<>(Mode.class);
        for (Mode m : modes) dynamoReads.put(m, new AtomicLong());
        Map<ShadowOutcome, AtomicLong> outcomes = new ConcurrentHashMap<>();
        ShadowListener count =
                (scope, o) -> outcomes.computeIfAbsent(o, x -> new AtomicLong()).incrementAndGet();
        AtomicLong next = new AtomicLong();
        long intervalNanos = 1_000_000_000L / rate;
        long start = System.nanoTime() + 50_000_000L;
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        try (ShadowReads shadows = new ShadowReads(redis, PREFIX, ShadowSettings.defaults(), count)) {
            Router router = new Router(redis, GuardSettings.defaults(PREFIX), shadows);
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                done.add(pool.submit(() -> {
                    for (long l; (l = next.getAndIncrement()) < total; ) {
                        int i = (int) l;
                        Mode mode = modeOf[i];
                        String key = keys.get(ThreadLocalRandom.current().nextInt(keys.size()));
                        Callable<Map<String, AttributeValue>> postgres = postgres(forms, key);
                        Callable<Map<String, AttributeValue>> dynamo = () -> {
                            dynamoReads.get(mode).incrementAndGet();
                            GetItemResponse r = slowDynamo.getItem(b -> b.tableName(TABLE)
                                    .key(source.key().dynamoKey(key))
                                    .consistentRead(true));
                            return r.hasItem() ? r.item() : null;
                        };
                        long due = start + i * intervalNanos; // open loop: a slow read does not slow the rate
                        long wait = due - System.nanoTime();
                        if (wait > 0) TimeUnit.NANOSECONDS.sleep(wait);
                        long began = System.nanoTime();
                        if (mode == Mode.PLAIN) {
                            router.readTarget(mode.scope); // the route, then the application's own read
                            postgres.call();
                        } else {
                            router.read(mode.scope, null, key, postgres, dynamo, forms::form);
                        }
                        micros[i] = (System.nanoTime() - Math.max(began, due)) / 1_000;
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) f.get();
        } finally {
            pool.shutdown();
        }
        System.out.printf("  shadow outcomes %s%n", outcomes);
        Map<Mode, Figures> figures = new EnumMap<>(Mode.class);
        for (Mode m : modes) {
            long[] sorted = BenchSteps.sorted(micros, total, i -> modeOf[i] == m);
            figures.put(
                    m,
                    new Figures(
                            BenchSteps.p50(sorted),
                            BenchSteps.p99(sorted),
                            sorted.length,
                            dynamoReads.get(m).get()));
        }
        return figures;
    }

    /**
     * The application's Postgres read, on a session of the calling thread's own: a shadow that reads Postgres again
     * runs on another thread.
     */
    private static final ThreadLocal<Connection> SESSIONS = new ThreadLocal<>();
    /** Every session opened, the shadow threads' too, closed at the end. */
    private static final List<Connection> OPENED = new CopyOnWriteArrayList<>();

    private static Callable<Map<String, AttributeValue>> postgres(CanonicalReads forms, String key) {
        return () -> {
            Connection c = SESSIONS.get();
            if (c == null) {
                c = forms.open();
                SESSIONS.set(c);
                OPENED.add(c);
            }
            return forms.row(c, key);
        };
    }

    /** Every row's item, as the copy writes it. */
    private static void load(
            DynamoDbClient dynamo,
            CanonicalReads forms,
            SourceTable source,
            MigrationConfig.Target target,
            List<String> keys)
            throws Exception {
        try {
            dynamo.deleteTable(b -> b.tableName(TABLE));
        } catch (ResourceNotFoundException absent) {
            // a first run
        }
        TargetTable.create(dynamo, TABLE, source.key(), SlotIndex.of(target));
        try (Connection c = forms.open()) {
            List<WriteRequest> batch = new ArrayList<>();
            for (String key : keys) {
                batch.add(WriteRequest.builder()
                        .putRequest(PutRequest.builder().item(forms.row(c, key)).build())
                        .build());
                if (batch.size() == 25 || key.equals(keys.get(keys.size() - 1))) {
                    List<WriteRequest> send = List.copyOf(batch);
                    var left = dynamo.batchWriteItem(b -> b.requestItems(Map.of(TABLE, send)))
                            .unprocessedItems();
                    while (left != null && !left.isEmpty()) {
                        var again = left;
                        left = dynamo.batchWriteItem(b -> b.requestItems(again)).unprocessedItems();
                    }
                    batch.clear();
                }
            }
        }
    }

    private static long median(List<Map<Mode, Figures>> runs, ToLongFunction<Map<Mode, Figures>> figure) {
        long[] v = runs.stream().mapToLong(figure).toArray();
        Arrays.sort(v);
        return v[v.length / 2];
    }
}
