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
 * transaction, in four modes alternated three times each: plain, on the table without the fence's trigger; plain
 * with the trigger installed (disabled while the fence is open, as --prepare leaves it); guarded the way
 * docs/cutover.md shows ({@link PostgresFence#commitIfAdmitted}: the fence's advisory lock taken shared, its row read
 * and the commit, one round trip), with the trigger; and guarded with the check first ({@link PostgresFence#check},
 * a round trip of its own), with the trigger. Prints each run's
 * write latency p50/p99 and the multixact IDs it consumed (from {@code pg_control_checkpoint()} around a CHECKPOINT),
 * then the medians and each guarded mode's ratio to plain.
 *
 * <p>Usage: {@code FenceBenchmark <jdbc-url> <writes-per-second> <seconds> <threads>}
 */
public final class FenceBenchmark {
    private static final String TABLE = "fence_bench_rows";
    private static final String FENCE = "public.fence_bench_fence";
    private static final String SCOPE = "bench";
    private static final int ROWS = 10_000;

    private enum Mode {
        PLAIN("plain", false),
        /** Plain writes with the fence's trigger installed (disabled while the fence is open, as before a flip). */
        TRIGGERED("trigger", true),
        AT_COMMIT("guarded", true),
        CHECK_FIRST("checked", true);

        final String label;
        /** Whether the table carries the fence's trigger for this mode's runs. */
        final boolean trigger;

        Mode(String label, boolean trigger) {
            this.label = label;
            this.trigger = trigger;
        }
    }

    private record Run(Mode mode, long p50Micros, long p99Micros, long writes, long multixacts) {}

    public static void main(String[] args) throws Exception {
        String url = args[0];
        int rate = Integer.parseInt(args[1]);
        int seconds = Integer.parseInt(args[2]);
        int threads = Integer.parseInt(args[3]);
        try (Connection c = DriverManager.getConnection(url);
                Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS " + TABLE);
            st.execute("DROP TABLE IF EXISTS " + FENCE);
            st.execute("CREATE TABLE " + TABLE + " (id int PRIMARY KEY, n bigint NOT NULL)");
            st.execute("INSERT INTO " + TABLE + " SELECT g, 0 FROM generate_series(1, " + ROWS + ") g");
            new PostgresFence(FENCE).install(c, SCOPE);
        }
        System.out.printf("fence: %d writes/s for %d s per run, %d threads, %d rows%n", rate, seconds, threads, ROWS);
        Map<Mode, List<Run>> runs = new EnumMap<>(Mode.class);
        Mode[] modes = Mode.values();
        for (int i = 0; i < 3; i++) {
            for (int k = 0; k < modes.length; k++) { // each round starts one mode later: no mode always runs first
                Mode m = modes[(i + k) % modes.length];
                runs.computeIfAbsent(m, x -> new ArrayList<>()).add(print(run(url, m, rate, seconds, threads)));
            }
        }
        long p50Plain = median(runs.get(Mode.PLAIN), Run::p50Micros);
        long p99Plain = median(runs.get(Mode.PLAIN), Run::p99Micros);
        System.out.printf(
                "median of 3: plain p50 %.2f ms, p99 %.2f ms, multixacts per run %d%n",
                p50Plain / 1000.0, p99Plain / 1000.0, median(runs.get(Mode.PLAIN), Run::multixacts));
        for (Mode m : List.of(Mode.TRIGGERED, Mode.AT_COMMIT, Mode.CHECK_FIRST)) {
            long p50 = median(runs.get(m), Run::p50Micros);
            long p99 = median(runs.get(m), Run::p99Micros);
            System.out.printf(
                    "median of 3: %s p50 %.2f ms (%.2fx plain), p99 %.2f ms (%.2fx plain), multixacts per run %d%n",
                    m.label,
                    p50 / 1000.0,
                    (double) p50 / Math.max(1, p50Plain),
                    p99 / 1000.0,
                    (double) p99 / Math.max(1, p99Plain),
                    median(runs.get(m), Run::multixacts));
        }
        try (Connection c = DriverManager.getConnection(url);
                Statement st = c.createStatement()) {
            st.execute("DROP TABLE " + TABLE);
            st.execute("DROP FUNCTION IF EXISTS " + FENCE + "_check() CASCADE");
            st.execute("DROP TABLE " + FENCE);
        }
    }

    private static Run print(Run r) {
        System.out.printf(
                "  %-7s %6d writes  p50 %6.2f ms  p99 %6.2f ms  multixacts %d%n",
                r.mode.label, r.writes, r.p50Micros / 1000.0, r.p99Micros / 1000.0, r.multixacts);
        return r;
    }

    private static Run run(String url, Mode mode, int rate, int seconds, int threads) throws Exception {
        PostgresFence fence = new PostgresFence(FENCE);
        try (Connection c = DriverManager.getConnection(url);
                Statement st = c.createStatement()) {
            if (mode.trigger) fence.trigger().install(c, TABLE, SCOPE);
            else fence.trigger().remove(c, TABLE);
            st.execute("VACUUM " + TABLE); // every run starts from the same table, whatever ran before it
        }
        long mxBefore = nextMultixact(url);
        long total = (long) rate * seconds;
        long[] micros = new long[(int) total];
        AtomicLong next = new AtomicLong();
        long intervalNanos = 1_000_000_000L / rate;
        long start = System.nanoTime() + 50_000_000L;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            done.add(pool.submit(() -> {
                try (Connection c = DriverManager.getConnection(url)) {
                    c.setAutoCommit(false);
                    try (PreparedStatement up = c.prepareStatement("UPDATE " + TABLE + " SET n = n + 1 WHERE id = ?")) {
                        for (long i; (i = next.getAndIncrement()) < total; ) {
                            long due = start + i * intervalNanos; // open loop: a slow write does not slow the rate
                            long wait = due - System.nanoTime();
                            if (wait > 0) TimeUnit.NANOSECONDS.sleep(wait);
                            long began = System.nanoTime();
                            if (mode == Mode.CHECK_FIRST) fence.check(c, SCOPE, 1);
                            up.setInt(1, 1 + ThreadLocalRandom.current().nextInt(ROWS));
                            up.executeUpdate();
                            if (mode == Mode.AT_COMMIT) fence.commitIfAdmitted(c, SCOPE, 1);
                            else c.commit();
                            micros[(int) i] = (System.nanoTime() - Math.max(began, due)) / 1_000;
                        }
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : done) f.get();
        pool.shutdown();
        long[] sorted = micros.clone();
        Arrays.sort(sorted);
        return new Run(
                mode,
                sorted[(int) (total * 0.5)],
                sorted[(int) Math.min(total - 1, total * 0.99)],
                total,
                nextMultixact(url) - mxBefore);
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
