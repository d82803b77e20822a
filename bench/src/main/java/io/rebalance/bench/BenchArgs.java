package io.rebalance.bench;

/**
 * The positional arguments the benchmark mains start with, as their scripts pass them: {@code endpoint rows hours
 * reps threads [launcher]}, then each benchmark's own ({@link #extra}).
 *
 * @param threads worker threads per copy process, or verify's parallel slots
 * @param launcher the command that starts a product process ({@code bin/rebalance}), empty when not given
 */
record BenchArgs(String endpoint, int rows, int hours, int reps, int threads, String launcher, String[] all) {
    static BenchArgs of(String[] args) {
        return new BenchArgs(
                args[0],
                Integer.parseInt(args[1]),
                Integer.parseInt(args[2]),
                Integer.parseInt(args[3]),
                Integer.parseInt(args[4]),
                args.length > 5 ? args[5] : "",
                args);
    }

    /** The benchmark's own argument at {@code index} (from 6), or {@code otherwise} when not given. */
    String extra(int index, String otherwise) {
        return all.length > index ? all[index] : otherwise;
    }
}
