package io.rebalance.ops.watch;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.rebalance.verifier.SlotResult;
import io.rebalance.verifier.VerificationStore;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/** Slots by the verdict of their latest verification, from the store {@code rebalance status} reads. */
final class VerifyMeters {
    private VerifyMeters() {}

    static void bind(MeterRegistry registry, Refresher refresher, VerificationStore store) {
        AtomicReference<Map<SlotResult.Verdict, Long>> counts = new AtomicReference<>(Map.of());
        refresher.every("verification", () -> {
            Map<SlotResult.Verdict, Long> c = new EnumMap<>(SlotResult.Verdict.class);
            store.all().values().forEach(s -> c.merge(s.verdict(), 1L, Long::sum));
            counts.set(c);
        });
        for (SlotResult.Verdict verdict : SlotResult.Verdict.values()) {
            Gauge.builder("rebalance.verify.slots", counts, c -> c.get().getOrDefault(verdict, 0L))
                    .description("Slots whose latest verification gave this verdict (run-wide)")
                    .tag("verdict", verdict.name())
                    .register(registry);
        }
    }
}
