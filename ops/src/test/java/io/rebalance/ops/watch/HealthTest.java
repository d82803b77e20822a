package io.rebalance.ops.watch;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class HealthTest {
    @Test
    void upOnlyWhenEveryCheckIsAndEachIsNamed() {
        Health h = new Health()
                .ready("redis", () -> Health.Result.up("answers PING"))
                .ready("lease", () -> Health.Result.down("stands by"));
        Health.Answer a = h.ready();
        assertThat(a.status()).isEqualTo(503);
        assertThat(a.body().get("status")).isEqualTo("DOWN");
        @SuppressWarnings("unchecked")
        Map<String, Map<String, Object>> checks =
                (Map<String, Map<String, Object>>) a.body().get("checks");
        assertThat(checks.keySet()).containsExactly("redis", "lease");
        assertThat(checks.get("lease")).containsEntry("status", "DOWN").containsEntry("detail", "stands by");
        assertThat(h.live().status()).as("no liveness check: live").isEqualTo(200);
    }

    @Test
    void aCheckThatThrowsIsDownNotAnError() {
        Health h = new Health().live("loop", () -> {
            throw new IllegalStateException("boom");
        });
        Health.Answer a = h.live();
        assertThat(a.status()).isEqualTo(503);
        assertThat(a.body().toString()).contains("boom");
    }
}
