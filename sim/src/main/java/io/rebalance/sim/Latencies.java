package io.rebalance.sim;

import java.util.Arrays;

/** Durations recorded from many threads, handed over in bulk. */
final class Latencies {
    private long[] values = new long[1024];
    private int size;

    synchronized void add(long micros) {
        if (size == values.length) values = Arrays.copyOf(values, size * 2);
        values[size++] = micros;
    }

    synchronized long[] drain() {
        long[] out = Arrays.copyOf(values, size);
        size = 0;
        return out;
    }
}
