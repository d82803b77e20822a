package io.rebalance.ops.watch;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.rebalance.cutover.AlignInstruction;
import io.rebalance.cutover.CutoverHooks;
import io.rebalance.cutover.CutoverOutcome;
import io.rebalance.cutover.CutoverStep;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A cutover's step durations, each set as the next step begins (so a long PRE_VERIFY shows while it runs) and all
 * set exactly from the outcome at the end, and how long writes were blocked.
 */
final class CutoverMeters implements CutoverHooks {
    private final MeterRegistry registry;
    private final CutoverHooks inner;
    private final Map<CutoverStep, AtomicLong> stepMs = new ConcurrentHashMap<>();
    private final AtomicLong blockedMs = new AtomicLong();
    private CutoverStep current;
    private long since;

    CutoverMeters(MeterRegistry registry, CutoverHooks inner) {
        this.registry = registry;
        this.inner = inner;
        Gauge.builder("rebalance.cutover.write.blocked.seconds", blockedMs, b -> b.get() / 1000.0)
                .description("How long the last cutover command blocked writes; 0 until it released them")
                .register(registry);
    }

    @Override
    public synchronized void before(CutoverStep step) throws Exception {
        long now = System.nanoTime();
        if (current != null) step(current).set((now - since) / 1_000_000);
        current = step;
        since = now;
        inner.before(step);
    }

    @Override
    public void inside(AlignInstruction instruction) throws Exception {
        inner.inside(instruction);
    }

    /** The command ended: the outcome's durations are the exact ones. */
    synchronized void done(CutoverOutcome outcome) {
        outcome.stepMs().forEach((step, ms) -> step(step).set(ms));
        blockedMs.set(outcome.blockedMs());
        current = null;
    }

    private AtomicLong step(CutoverStep step) {
        return stepMs.computeIfAbsent(step, s -> {
            AtomicLong ms = new AtomicLong();
            Gauge.builder("rebalance.cutover.step.seconds", ms, m -> m.get() / 1000.0)
                    .description("How long each step of the last cutover command took")
                    .tag("step", s.name())
                    .register(registry);
            return ms;
        });
    }
}
