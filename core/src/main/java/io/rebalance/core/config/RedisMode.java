package io.rebalance.core.config;

import java.util.Arrays;
import java.util.Locale;

/** How the run reaches Redis ({@code redis.mode}): one server, a Redis Cluster, or a primary Sentinel names. */
public enum RedisMode {
    STANDALONE,
    CLUSTER,
    SENTINEL;

    public String text() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** @throws IllegalArgumentException naming the key, the value and the choices */
    public static RedisMode of(String text) {
        for (RedisMode m : values()) if (m.text().equals(text)) return m;
        throw new IllegalArgumentException("redis.mode='" + text + "' is not valid; expected one of "
                + Arrays.stream(values()).map(RedisMode::text).toList());
    }
}
