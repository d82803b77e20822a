package io.rebalance.client;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.rebalance.protocol.shadow.ShadowOutcome;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Shadow-read outcomes as counters in the application's Micrometer registry: {@code rebalance.shadow.reads}, tagged
 * with the scope (a part's scope for a table moved part by part) and the outcome, which Prometheus exposes as {@code
 * rebalance_shadow_reads_total{scope,outcome}}. Micrometer is an optional dependency of this module: only an
 * application that hands over a registry needs it.
 */
public final class ShadowMeters implements ShadowListener {
    public static final String NAME = "rebalance.shadow.reads";

    private final MeterRegistry registry;
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();

    public ShadowMeters(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void outcome(String scope, ShadowOutcome outcome) {
        counters.computeIfAbsent(scope + "\n" + outcome.wire(), k -> Counter.builder(NAME)
                        .description("Reads through Router also read from the other store, by outcome")
                        .tag("scope", scope)
                        .tag("outcome", outcome.wire())
                        .register(registry))
                .increment();
    }
}
