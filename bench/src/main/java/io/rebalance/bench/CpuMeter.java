package io.rebalance.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

/**
 * CPU seconds spent by the processes a benchmark drives, read from /proc (Linux), so a figure can be told apart as
 * limited by the machine (every core busy) or by waiting. Groups: this JVM, DynamoDB Local (the process whose
 * command line names {@code dynamodb-local}), Postgres (every {@code postgres} process), and the machine as a whole.
 */
final class CpuMeter {
    private static final double TICKS = 100.0; // USER_HZ: 100 on every Linux this runs on
    private static final long SELF = ProcessHandle.current().pid();

    /** CPU seconds per group at one moment. */
    record Sample(long nanos, Map<String, Double> seconds) {}

    static boolean available() {
        return Files.isReadable(Path.of("/proc/stat"));
    }

    static Sample sample() {
        Map<String, Double> s = new LinkedHashMap<>();
        s.put("bench JVM", 0.0);
        s.put("DynamoDB Local", 0.0);
        s.put("Postgres", 0.0);
        if (available()) {
            try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
                procs.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit))
                        .forEach(p -> {
                            String group = group(p);
                            // Postgres backends end when their connection closes; the postmaster keeps their time
                            boolean reaped = "Postgres".equals(group);
                            if (group != null) s.merge(group, cpu(p.resolve("stat"), reaped), Double::sum);
                        });
            } catch (IOException e) {
                throw new IllegalStateException("reading /proc", e);
            }
            s.put("machine", machine());
        }
        return new Sample(System.nanoTime(), s);
    }

    /** The pids of the Postgres processes running now. */
    static Set<Long> postgresPids() {
        Set<Long> out = new HashSet<>();
        if (!available()) return out;
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            procs.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit))
                    .filter(p -> "Postgres".equals(group(p)))
                    .forEach(p -> out.add(Long.parseLong(p.getFileName().toString())));
        } catch (IOException e) {
            throw new IllegalStateException("reading /proc", e);
        }
        return out;
    }

    /**
     * Waits (up to 10 s) until every Postgres process not in {@code before} has ended: an ending backend's time moves
     * to the postmaster's when it is reaped, and a sample taken while it ends may miss it or count it twice.
     */
    static void awaitEnded(Set<Long> before) throws InterruptedException {
        Set<Long> started = postgresPids();
        started.removeAll(before);
        CompletableFuture<?>[] ends = started.stream()
                .map(ProcessHandle::of)
                .flatMap(Optional::stream)
                .map(ProcessHandle::onExit)
                .toArray(CompletableFuture[]::new);
        try {
            CompletableFuture.allOf(ends).get(10, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            // a process still running (autovacuum, say) is measured as it stands
        }
    }

    /** One line: each group's share of one core between two samples, and of the whole machine. */
    static String between(Sample a, Sample b) {
        double wall = (b.nanos() - a.nanos()) / 1e9;
        StringBuilder out = new StringBuilder("cpu (cores busy):");
        for (var e : b.seconds().entrySet()) {
            double used = e.getValue() - a.seconds().getOrDefault(e.getKey(), 0.0);
            out.append(String.format("  %s %.2f", e.getKey(), used / wall));
        }
        out.append(String.format("  of %d", Runtime.getRuntime().availableProcessors()));
        return out.toString();
    }

    /** CPU seconds one group spent between two samples. */
    static double seconds(Sample a, Sample b, String group) {
        return b.seconds().getOrDefault(group, 0.0) - a.seconds().getOrDefault(group, 0.0);
    }

    private static String group(Path proc) {
        try {
            if (Long.parseLong(proc.getFileName().toString()) == SELF) return "bench JVM";
            String cmd = Files.readString(proc.resolve("cmdline")).replace('\0', ' ');
            if (cmd.contains("dynamodb-local")) return "DynamoDB Local";
            if (Files.readString(proc.resolve("comm")).trim().equals("postgres")) return "Postgres";
            return null;
        } catch (IOException | RuntimeException e) {
            return null; // the process ended while being read
        }
    }

    /** utime + stime of one process, with its ended children's when {@code reaped}, in seconds. */
    private static double cpu(Path stat, boolean reaped) {
        try {
            String line = Files.readString(stat);
            String[] f = line.substring(line.lastIndexOf(')') + 2).split(" "); // comm may hold spaces
            long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);
            if (reaped) ticks += Long.parseLong(f[13]) + Long.parseLong(f[14]);
            return ticks / TICKS;
        } catch (IOException | RuntimeException e) {
            return 0; // the process ended while being read
        }
    }

    /** Every core's busy time (all but idle and iowait), in seconds. */
    private static double machine() {
        try {
            String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
            long busy = 0;
            for (int i = 1; i <= 8 && i < f.length; i++)
                if (i != 4 && i != 5) busy += Long.parseLong(f[i]); // guest is in user
            return busy / TICKS;
        } catch (IOException e) {
            throw new IllegalStateException("reading /proc/stat", e);
        }
    }
}
