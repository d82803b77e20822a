package io.rebalance.core.config;

import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/** {@code mover.coordinator}: where the copy's processes coordinate: Redis, or tables in Postgres. */
public enum CoordinatorKind {
    REDIS,
    POSTGRES;

    /** As the configuration writes it (Jackson reads and writes this form). */
    @JsonValue
    public String text() {
        return name().toLowerCase(Locale.ROOT);
    }
}
