package io.rebalance.bench;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.source.SourceSession;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.sim.CutoverCycles;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntPredicate;
import java.util.stream.IntStream;

/** The steps the benchmarks share: flags from settings, a fresh table, a command that must succeed, a wait, draws. */
final class BenchSteps {
    private BenchSteps() {}

    interface Condition {
        boolean holds() throws Exception;
    }

    /** {@code settings} as the {@code --set key=value} flags of the commands the benchmark runs. */
    static List<String> flags(Map<String, String> settings) {
        List<String> flags = new ArrayList<>();
        settings.forEach((k, v) -> {
            flags.add("--set");
            flags.add(k + "=" + v);
        });
        return flags;
    }

    /**
     * Drops {@code table} and generates it anew: {@code rows} room events over the {@code hours} hours before
     * 2024-10-20T00:00Z, from {@code seed} (the same seed, the same rows).
     */
    static void freshTable(MigrationConfig.Source source, String table, int rows, int hours, long seed)
            throws Exception {
        System.out.printf("generating %,d rows over %d hours in %s%n", rows, hours, table);
        try (Connection c = new SourceSession(source).open();
                Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS " + table);
            RoomEventsGenerator.create(c, table, rows, Instant.parse("2024-10-20T00:00:00Z"), hours, seed);
        }
    }

    /** The first {@code count} of {@code values} whose index {@code which} picks, sorted: one mode's latencies. */
    static long[] sorted(long[] values, int count, IntPredicate which) {
        return IntStream.range(0, count)
                .filter(which)
                .mapToLong(i -> values[i])
                .sorted()
                .toArray();
    }

    /** {@code count} choices among {@code choices}, each drawn at random: the mode of each write, in the same run. */
    static <T> T[] drawn(T[] choices, int count) {
        T[] out = Arrays.copyOf(choices, count);
        for (int i = 0; i < count; i++)
            out[i] = choices[ThreadLocalRandom.current().nextInt(choices.length)];
        return out;
    }

    /** The median of sorted values. */
    static long p50(long[] sorted) {
        return sorted[sorted.length / 2];
    }

    /** The 99th percentile of sorted values (the highest, for fewer than a hundred). */
    static long p99(long[] sorted) {
        return sorted[(int) Math.min(sorted.length - 1, sorted.length * 0.99)];
    }

    /** @throws IllegalStateException with the command's output when it failed */
    static void check(CutoverCycles.Command c) {
        if (c.exitCode() != 0) throw new IllegalStateException("command failed (" + c.exitCode() + "):\n" + c.output());
    }

    /** Polls {@code c} until it holds. @throws IllegalStateException after 120 s */
    static void until(Condition c) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!c.holds()) {
            if (System.nanoTime() > deadline) throw new IllegalStateException("gave up waiting after 120 s");
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200)); // a slot or a pre-check settling
        }
    }
}
