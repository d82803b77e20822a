package io.rebalance.core.config;

import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/** {@code slots.idFormat}: how an id tells time: found from the key's type, a ULID, or a time-ordered bigint. */
public enum IdFormat {
    AUTO,
    ULID,
    SNOWFLAKE;

    /** As the configuration writes it (Jackson reads and writes this form). */
    @JsonValue
    public String text() {
        return name().toLowerCase(Locale.ROOT);
    }
}
