package io.rebalance.core.config;

import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/** {@code log.format}: one text line per event, or one JSON object per event. */
public enum LogForm {
    TEXT,
    JSON;

    /** As the configuration writes it (Jackson reads and writes this form). */
    @JsonValue
    public String text() {
        return name().toLowerCase(Locale.ROOT);
    }
}
