package io.rebalance.bench;

import io.rebalance.core.coordinator.CoordinatorSchema;
import io.rebalance.core.redis.RedisConnector;
import io.rebalance.core.retry.Retrier;
import io.rebalance.core.slot.Slot;
import io.rebalance.mover.SlotStore;
import io.rebalance.mover.postgres.PostgresSlotStore;
import io.rebalance.mover.redis.RedisSlotStore;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.lease.PostgresLeaseStore;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import redis.clients.jedis.UnifiedJedis;

/**
 * What coordinating slots costs in Redis and in Postgres, in the same run: claims/s (every worker claims a slot and
 * finishes it until none is left: in Postgres {@link PostgresSlotStore#claimNext}, one statement; in Redis the acquire
 * of the next slot from a shared counter, the least a walk can cost; the finish is one statement or script more) and
 * progress saves/s (every worker saves progress of a slot of its own for a few seconds), at 8 and 32 workers, each
 * with one Postgres session per worker. For each phase it prints what the
 * Postgres server did: statements (transactions, from {@code pg_stat_database}) and WAL bytes per second.
 *
 * <p>Usage: {@code CoordinatorBenchmark <jdbc-url> <redis-url> <slots> <save-seconds> <reps>}
 */
public final class CoordinatorBenchmark {
    private static final int[] WORKERS = {8, 32};
    private static final long STARTED = System.currentTimeMillis();

    private record Phase(double perSecond, double statementsPerSecond, double walBytesPerSecond) {}

    public static void main(String[] args) throws Exception {
        String url = args[0];
        String redisUrl = args[1];
        int slotCount = Integer.parseInt(args[2]);
        int saveSeconds = Integer.parseInt(args[3]);
        int reps = Integer.parseInt(args[4]);
        String schemaName = "bench_coordinator";
        CoordinatorSchema schema = new CoordinatorSchema(schemaName);
        try (Connection c = DriverManager.getConnection(url);
                Statement st = c.createStatement()) {
            st.execute("DROP SCHEMA IF EXISTS " + schemaName + " CASCADE");
            schema.ensure(c);
        }
        List<Slot> slots = new ArrayList<>();
        for (Slot s = Slot.containing(Instant.parse("2024-10-20T00:00:00Z")); slots.size() < slotCount; s = s.older())
            slots.add(s);
        Map<String, List<Phase>> claims = new LinkedHashMap<>();
        Map<String, List<Phase>> saves = new LinkedHashMap<>();
        AtomicInteger runs = new AtomicInteger();
        try (UnifiedJedis redis = RedisConnector.connect(redisUrl, 40)) {
            for (int rep = 1; rep <= reps; rep++) {
                for (int workers : WORKERS) {
                    for (int k = 0; k < 2; k++) {
                        boolean postgres = (k + rep) % 2 == 0; // which goes first alternates
                        String name = (postgres ? "postgres" : "redis") + ", " + workers + " workers";
                        String run = "bench" + STARTED + "x"
                                + runs.incrementAndGet(); // apart from earlier invocations' keys
                        Sessions sessions = new Sessions(url);
                        SlotStore store = store(postgres, sessions, schema, redis, run, slots);
                        ConcurrentLinkedQueue<Held> held = new ConcurrentLinkedQueue<>();
                        Phase claimed = measure(url, sessions, () -> claimAll(store, slots, workers, held), slotCount);
                        sessions.closeAll();
                        Sessions saving = new Sessions(url);
                        String savers = run + "s";
                        SlotStore saver = store(postgres, saving, schema, redis, savers, slots.subList(0, workers));
                        claimOneEach(saver, slots, workers, held);
                        AtomicLong count = new AtomicLong();
                        Phase saved = measure(
                                url, saving, () -> saveFor(saver, held, workers, saveSeconds, count), -1, count);
                        saving.closeAll();
                        claims.computeIfAbsent(name, n -> new ArrayList<>()).add(claimed);
                        saves.computeIfAbsent(name, n -> new ArrayList<>()).add(saved);
                        System.out.printf(
                                "  run %d, %s: %,.0f claims/s (%,.0f statements/s, %,.0f WAL B/s); %,.0f saves/s"
                                        + " (%,.0f statements/s, %,.0f WAL B/s)%n",
                                rep,
                                name,
                                claimed.perSecond(),
                                claimed.statementsPerSecond(),
                                claimed.walBytesPerSecond(),
                                saved.perSecond(),
                                saved.statementsPerSecond(),
                                saved.walBytesPerSecond());
                    }
                }
            }
        }
        System.out.printf("%nslots %,d, saves for %d s; %d runs; medians:%n", slotCount, saveSeconds, reps);
        for (int workers : WORKERS) {
            Phase rc = medians(claims.get("redis, " + workers + " workers"));
            Phase pc = medians(claims.get("postgres, " + workers + " workers"));
            Phase rs = medians(saves.get("redis, " + workers + " workers"));
            Phase ps = medians(saves.get("postgres, " + workers + " workers"));
            System.out.printf(
                    "  %2d workers: claims/s redis %,8.0f, postgres %,8.0f (%.2fx); saves/s redis %,8.0f, postgres %,8.0f"
                            + " (%.2fx)%n",
                    workers,
                    rc.perSecond(),
                    pc.perSecond(),
                    pc.perSecond() / rc.perSecond(),
                    rs.perSecond(),
                    ps.perSecond(),
                    ps.perSecond() / rs.perSecond());
            System.out.printf(
                    "              the source's extra load with postgres: claims %,.0f statements/s, %,.0f WAL B/s;"
                            + " saves %,.0f statements/s, %,.0f WAL B/s (with redis: %,.0f and %,.0f statements/s)%n",
                    pc.statementsPerSecond(),
                    pc.walBytesPerSecond(),
                    ps.statementsPerSecond(),
                    ps.walBytesPerSecond(),
                    rc.statementsPerSecond(),
                    rs.statementsPerSecond());
        }
        try (Connection c = DriverManager.getConnection(url);
                Statement st = c.createStatement()) {
            st.execute("DROP SCHEMA IF EXISTS " + schemaName + " CASCADE");
        }
    }

    private record Held(Slot slot, String member) {}

    /** A slot store of its own run; in Postgres with {@code slots} planned. */
    private static SlotStore store(
            boolean postgres,
            Sessions sessions,
            CoordinatorSchema schema,
            UnifiedJedis redis,
            String run,
            List<Slot> slots) {
        if (postgres) {
            PostgresSlotStore store =
                    new PostgresSlotStore(sessions, schema, run, Retrier.standard(), Duration.ofMinutes(5));
            store.plan(slots);
            return store;
        }
        return new RedisSlotStore(
                redis,
                new Keyspace("bench:" + run + ":").run(),
                Retrier.standard(),
                Duration.ofMinutes(5),
                Duration.ofHours(1));
    }

    /** Every worker claims a slot and finishes it, until none is left, as workers do with slots that copy at once. */
    private static void claimAll(SlotStore store, List<Slot> slots, int workers, ConcurrentLinkedQueue<Held> held)
            throws Exception {
        AtomicInteger next = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        parallel(workers, w -> {
            String owner = "w" + w;
            while (true) {
                Held h;
                if (store instanceof PostgresSlotStore p) {
                    Optional<PostgresSlotStore.Claimed> c = p.claimNext(owner);
                    if (c.isEmpty()) return;
                    h = new Held(c.get().slot(), c.get().acquire().lease().member());
                } else {
                    int i = next.getAndIncrement();
                    if (i >= slots.size()) return;
                    h = new Held(
                            slots.get(i),
                            store.acquire(slots.get(i), owner).lease().member());
                }
                if (store.finish(h.slot(), h.member(), "last", 1) != null)
                    throw new IllegalStateException("a finish was refused for " + h.slot());
                done.incrementAndGet();
            }
        });
        if (done.get() != slots.size()) throw new IllegalStateException("claimed " + done.get() + " slots");
    }

    /** Each worker claims one slot of its own, to save its progress. */
    private static void claimOneEach(SlotStore store, List<Slot> slots, int workers, ConcurrentLinkedQueue<Held> held)
            throws Exception {
        parallel(workers, w -> {
            if (store instanceof PostgresSlotStore p) {
                PostgresSlotStore.Claimed c = p.claimNext("s" + w).orElseThrow();
                held.add(new Held(c.slot(), c.acquire().lease().member()));
            } else {
                held.add(new Held(
                        slots.get(w),
                        store.acquire(slots.get(w), "s" + w).lease().member()));
            }
        });
    }

    private static void saveFor(
            SlotStore store, ConcurrentLinkedQueue<Held> held, int workers, int seconds, AtomicLong count)
            throws Exception {
        List<Held> all = new ArrayList<>(held);
        long until = System.nanoTime() + seconds * 1_000_000_000L;
        parallel(workers, w -> {
            for (int i = w; System.nanoTime() < until; i += workers) {
                Held h = all.get(i % all.size());
                if (store.saveProgress(h.slot(), h.member(), "id-" + i, 1) != null)
                    throw new IllegalStateException("a save was refused for " + h.slot());
                count.incrementAndGet();
            }
        });
    }

    private interface Work {
        void run() throws Exception;
    }

    private interface PerWorker {
        void run(int worker) throws Exception;
    }

    private static void parallel(int workers, PerWorker work) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(workers);
        CountDownLatch start = new CountDownLatch(1);
        try {
            List<Future<?>> all = new ArrayList<>();
            for (int w = 0; w < workers; w++) {
                int worker = w;
                all.add(pool.submit(() -> {
                    start.await();
                    work.run(worker);
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : all) f.get();
        } finally {
            pool.shutdownNow();
        }
    }

    private static Phase measure(String url, Sessions sessions, Work work, long items) throws Exception {
        return measure(url, sessions, work, items, null);
    }

    /** Runs {@code work} and what Postgres did meanwhile; its sessions are closed first, so their counts are in. */
    private static Phase measure(String url, Sessions sessions, Work work, long items, AtomicLong counted)
            throws Exception {
        long[] before = serverCounters(url);
        long t0 = System.nanoTime();
        work.run();
        double seconds = (System.nanoTime() - t0) / 1e9;
        sessions.closeAll(); // a backend that ends reports its statements
        long[] after = serverCounters(url);
        long n = counted == null ? items : counted.get();
        return new Phase(n / seconds, (after[0] - before[0] - 1) / seconds, (after[1] - before[1]) / seconds);
    }

    /** Transactions committed and rolled back in this database, and the WAL position in bytes. */
    static long[] serverCounters(String url) throws Exception {
        try (Connection c = DriverManager.getConnection(url);
                Statement st = c.createStatement()) {
            st.execute("SELECT pg_stat_clear_snapshot()");
            try (ResultSet rs = st.executeQuery("SELECT (SELECT xact_commit + xact_rollback FROM pg_stat_database"
                    + " WHERE datname = current_database()), pg_current_wal_lsn() - '0/0'")) {
                rs.next();
                return new long[] {rs.getLong(1), rs.getLong(2)};
            }
        }
    }

    private static Phase medians(List<Phase> phases) {
        return new Phase(
                CopyBenchmark.median(phases.stream().map(Phase::perSecond).toList()),
                CopyBenchmark.median(
                        phases.stream().map(Phase::statementsPerSecond).toList()),
                CopyBenchmark.median(
                        phases.stream().map(Phase::walBytesPerSecond).toList()));
    }

    /**
     * One Postgres session per thread, handed to the stores as one that closes: the stores open a session per
     * statement, and a bench that paid a connection per statement would measure connecting, not coordinating.
     */
    private static final class Sessions implements PostgresLeaseStore.Sessions {
        private final String url;
        private final List<Connection> opened = new CopyOnWriteArrayList<>();
        private final ThreadLocal<Connection> mine = new ThreadLocal<>();

        Sessions(String url) {
            this.url = url;
        }

        @Override
        public Connection open() throws SQLException {
            Connection c = mine.get();
            if (c == null || c.isClosed()) {
                c = DriverManager.getConnection(url);
                mine.set(c);
                opened.add(c);
            }
            Connection real = c;
            return (Connection) Proxy.newProxyInstance(
                    Connection.class.getClassLoader(), new Class<?>[] {Connection.class}, (proxy, m, a) -> {
                        if (m.getName().equals("close")) return null; // kept for the thread's next statement
                        try {
                            return m.invoke(real, a);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        }

        void closeAll() throws SQLException {
            for (Connection c : opened) c.close();
            opened.clear();
        }
    }
}
