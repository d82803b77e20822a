package io.rebalance.core.config;

import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/**
 * {@code slots.timeFrom}: what places a row in its slot: the time inside its id, a timestamp column, or nothing (slots
 * are key ranges).
 */
public enum TimeFrom {
    ID,
    COLUMN,
    NONE;

    /** As the configuration writes it (Jackson reads and writes this form). */
    @JsonValue
    public String text() {
        return name().toLowerCase(Locale.ROOT);
    }
}
