package io.rebalance.core.redis;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import redis.clients.jedis.UnifiedJedis;

/**
 * A capped Redis list of timed samples, the last hour at one sample per {@link #EVERY_MS}: the history the dashboard
 * draws (the tail's lag and retained WAL, the copy's rows/s). Each writer appends at most once per period; what is
 * older than the cap falls off, so the list never grows.
 */
public final class SampleLog {
    /** One sample per 10 s. */
    public static final long EVERY_MS = 10_000;

    /** An hour of samples. */
    public static final int KEPT = 360;

    private final UnifiedJedis redis;
    private final String key;
    private long lastMs;

    public SampleLog(UnifiedJedis redis, String key) {
        this.redis = redis;
        this.key = key;
    }

    /** A sample: when, and its values. */
    public record Sample(long atMs, long[] values) {}

    /** Appends {@code values} at {@code nowMs} unless this writer appended less than {@link #EVERY_MS} ago. */
    public void append(long nowMs, long... values) {
        if (nowMs - lastMs < EVERY_MS) return;
        StringBuilder line = new StringBuilder(Long.toString(nowMs));
        for (long v : values) line.append(' ').append(v);
        redis.lpush(key, line.toString());
        redis.ltrim(key, 0, KEPT - 1);
        lastMs = nowMs;
    }

    /** The samples of the last {@link #KEPT} periods, oldest first; a malformed entry is skipped. */
    public List<Sample> read() {
        List<Sample> out = new ArrayList<>();
        for (String line : redis.lrange(key, 0, KEPT - 1)) {
            String[] parts = line.split(" ");
            try {
                long[] values = new long[parts.length - 1];
                for (int i = 1; i < parts.length; i++) values[i - 1] = Long.parseLong(parts[i]);
                out.add(new Sample(Long.parseLong(parts[0]), values));
            } catch (NumberFormatException e) {
                // written by another version: left out of the chart
            }
        }
        Collections.reverse(out);
        return out;
    }
}
