package io.rebalance.core.config;

import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/** {@code target.json}: how a json/jsonb column is stored: a DynamoDB map, or its text. */
public enum JsonForm {
    MAP,
    STRING;

    /** As the configuration writes it (Jackson reads and writes this form). */
    @JsonValue
    public String text() {
        return name().toLowerCase(Locale.ROOT);
    }
}
