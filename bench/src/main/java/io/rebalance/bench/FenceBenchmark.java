package io.rebalance.bench;

import io.rebalance.protocol.fence.PostgresFence;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToLongFunction;

/**
 * The Postgres fence's cost: application writes at a fixed rate, each an UPDATE of a random row in its own
 * transaction, in four modes drawn at random for each write inside one run, so every mode meets the same machine
 * (a noisy neighbour, a checkpoint, a GC pause falls on all four alike, not on whichever mode ran then): plain, on a
 * table without the fence's trigger (the floor); plain on a second table that carries the trigger (installed and
 * disabled, as --prepare leaves it while the fence is open); guarded the way docs/cutover.md shows
 * ({@link PostgresFence#commitIfAdmitted}: the fence's advisory lock taken shared, its row read and the commit, one
 * round trip), on the table with the trigger; and guarded with the check first ({@link PostgresFence#check}, a round
 * trip of its own), on that table too. Three runs; prints each run's per-mode write latency p50/p99 and the
 * multixact IDs the run consumed (from {@code pg_control_checkpoint()} around a CHECKPOINT), then the medians of the
 * three and each mode's ratio to plain.
 *
 * <p>Usage: {@code FenceBenchmark <jdbc-url> <writes-per-second> <seconds> <threads>}
 */
public final class FenceBenchmark {
    private static final String PLAIN_TABLE = "fence_bench_plain";
    private static final String TABLE = "fence_bench_rows";
    private static final String FENCE = "public.fence_bench_fence";
    private static final String SCOPE = "bench";
    private static final int ROWS = 10_000;
    private static final int RUNS = 3;

    private enum Mode {
        PLAIN("plain"),
        /** Plain writes to the table with the fence's trigger (disabled while the fence is open, as before a flip). */
        TRIGGERED("trigger"),
        AT_COMMIT("guarded"),
        CHECK_FIRST("checked");

        final String label;

        Mode(String label) {
            this.label = label;
        }
    }

    private record Figures(long p50Micros, long p99Micros, long writes) {}

    private record Run(Map<Mode, Figures> modes, long multixacts) {}

    public static void main(String[] args) throws Exception {
        String url = args[0];
        int rate = Integer.parseInt(args[1]);
        int seconds = Integer.parseInt(args[2]);
        int threads = Integer.parseInt(args[3]);
        PostgresFence fence = new PostgresFence(FENCE);
        try (Connection c = DriverManager.getConnection(url);
                Statement st = c.createStatement()) {
            for (String t : List.of(PLAIN_TABLE, TABLE)) {
                st.execute("DROP TABLE IF EXISTS " + t);
                st.execute("CREATE TABLE " + t + " (id int PRIMARY KEY, n bigint NOT NULL)");
                st.execute("INSERT INTO " + t + " SELECT g, 0 FROM generate_series(1, " + ROWS + ") g");
            }
            st.execute("DROP TABLE IF EXISTS " + FENCE);
            fence.install(c, SCOPE);
            fence.trigger().install(c, TABLE, SCOPE);
        }
        System.out.printf(
                "fence: %d writes/s for %d s per run, %d threads, %d rows a table, the four modes drawn at random for"
                        + " each write%n",
                rate, seconds, threads, ROWS);
        List<Run> runs = new ArrayList<>();
        for (int i = 0; i < RUNS; i++) runs.add(print(i + 1, run(url, fence, rate, seconds, threads)));
        long p50Plain = median(runs, r -> r.modes().get(Mode.PLAIN).p50Micros());
        long p99Plain = median(runs, r -> r.modes().get(Mode.PLAIN).p99Micros());
        System.out.printf(
                "median of %d: plain p50 %.2f ms, p99 %.2f ms, multixacts per run %d%n",
                RUNS, p50Plain / 1000.0, p99Plain / 1000.0, median(runs, Run::multixacts));
        for (Mode m : List.of(Mode.TRIGGERED, Mode.AT_COMMIT, Mode.CHECK_FIRST)) {
            long p50 = median(runs, r -> r.modes().get(m).p50Micros());
            long p99 = median(runs, r -> r.modes().get(m).p99Micros());
            System.out.printf(
                    "median of %d: %s p50 %.2f ms (%.2fx plain), p99 %.2f ms (%.2fx plain)%n",
                    RUNS,
                    m.label,
                    p50 / 1000.0,
                    (double) p50 / Math.max(1, p50Plain),
                    p99 / 1000.0,
                    (double) p99 / Math.max(1, p99Plain));
        }
        try (Connection c = DriverManager.getConnection(url);
                Statement st = c.createStatement()) {
            st.execute("DROP TABLE " + PLAIN_TABLE);
            st.execute("DROP TABLE " + TABLE);
            st.execute("DROP FUNCTION IF EXISTS " + FENCE + "_check() CASCADE");
            st.execute("DROP TABLE " + FENCE);
        }
    }

    private static Run print(int n, Run r) {
        for (Mode m : Mode.values()) {
            Figures f = r.modes().get(m);
            System.out.printf(
                    "  run %d %-7s %6d writes  p50 %6.2f ms  p99 %6.2f ms%n",
                    n, m.label, f.writes(), f.p50Micros() / 1000.0, f.p99Micros() / 1000.0);
        }
        System.out.printf("  run %d multixacts %d%n", n, r.multixacts());
        return r;
    }

    private static Run run(String url, PostgresFence fence, int rate, int seconds, int threads) throws Exception {
        try (Connection c = DriverManager.getConnection(url);
                Statement st = c.createStatement()) {
            st.execute("VACUUM " + PLAIN_TABLE); // every run starts from the same tables, whatever ran before it
            st.execute("VACUUM " + TABLE);
        }
        long mxBefore = nextMultixact(url);
        int total = rate * seconds;
        long[] micros = new long[total];
        Mode[] modes = Mode.values();
        Mode[] modeOf = BenchSteps.drawn(modes, total);
        AtomicLong next = new AtomicLong();
        long intervalNanos = 1_000_000_000L / rate;
        long start = System.nanoTime() + 50_000_000L;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            done.add(pool.submit(() -> {
                try (Connection c = DriverManager.getConnection(url)) {
                    c.setAutoCommit(false);
                    try (PreparedStatement plain =
                                    c.prepareStatement("UPDATE " + PLAIN_TABLE + " SET n = n + 1 WHERE id = ?");
                            PreparedStatement fenced =
                                    c.prepareStatement("UPDATE " + TABLE + " SET n = n + 1 WHERE id = ?")) {
                        for (long l; (l = next.getAndIncrement()) < total; ) {
                            int i = (int) l;
                            Mode mode = modeOf[i];
                            long due = start + i * intervalNanos; // open loop: a slow write does not slow the rate
                            long wait = due - System.nanoTime();
                            if (wait > 0) TimeUnit.NANOSECONDS.sleep(wait);
                            long began = System.nanoTime();
                            if (mode == Mode.CHECK_FIRST) fence.check(c, SCOPE, 1);
                            PreparedStatement up = mode == Mode.PLAIN ? plain : fenced;
                            up.setInt(1, 1 + ThreadLocalRandom.current().nextInt(ROWS));
                            up.executeUpdate();
                            if (mode == Mode.AT_COMMIT) fence.commitIfAdmitted(c, SCOPE, 1);
                            else c.commit();
                            micros[i] = (System.nanoTime() - Math.max(began, due)) / 1_000;
                        }
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : done) f.get();
        pool.shutdown();
        Map<Mode, Figures> figures = new EnumMap<>(Mode.class);
        for (Mode m : modes) {
            long[] sorted = BenchSteps.sorted(micros, total, i -> modeOf[i] == m);
            figures.put(m, new Figures(BenchSteps.p50(sorted), BenchSteps.p99(sorted), sorted.length));
        }
        return new Run(figures, nextMultixact(url) - mxBefore);
    }

    /** The next multixact ID as of a checkpoint taken now (pg_control_checkpoint shows the last checkpoint's). */
    private static long nextMultixact(String url) throws Exception {
        try (Connection c = DriverManager.getConnection(url);
                Statement st = c.createStatement()) {
            st.execute("CHECKPOINT");
            try (ResultSet rs =
                    st.executeQuery("SELECT next_multixact_id::text::bigint FROM pg_control_checkpoint()")) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private static long median(List<Run> runs, ToLongFunction<Run> figure) {
        long[] v = runs.stream().mapToLong(figure).toArray();
        Arrays.sort(v);
        return v[v.length / 2];
    }
}
