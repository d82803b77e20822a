package io.rebalance.core.config;

import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/** How the run reaches Redis ({@code redis.mode}): one server, a Redis Cluster, or a primary Sentinel names. */
public enum RedisMode {
    STANDALONE,
    CLUSTER,
    SENTINEL;

    /** As the configuration writes it (Jackson reads and writes this form). */
    @JsonValue
    public String text() {
        return name().toLowerCase(Locale.ROOT);
    }
}
