package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The schema check bites: an output with a number as text, or a field missing, fails it. */
class JsonSchemasIT {
    @Test
    void anOutputOffItsSchemaFails() {
        JsonSchemas.assertValid("rate", "{\"prefix\": \"p:\", \"rateLimit\": 5, \"writeUnits\": 0}");
        assertThatThrownBy(() -> JsonSchemas.assertValid("rate", "{\"prefix\": \"p:\", \"rateLimit\": \"5\"}"))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("rateLimit");
        assertThatThrownBy(() -> JsonSchemas.assertValid(
                        "cutover", "{\"op\": \"cutover\", \"scope\": \"s\", \"blockedMs\": 12}"))
                .isInstanceOf(AssertionError.class);
        assertThatThrownBy(() -> JsonSchemas.assertValid("status", "{\"prefix\": \"p:\", \"status\": \"RUNNING\"}"))
                .isInstanceOf(AssertionError.class);
    }
}
