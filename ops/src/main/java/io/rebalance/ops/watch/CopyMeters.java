package io.rebalance.ops.watch;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.rebalance.mover.MoverCounters;
import io.rebalance.mover.MoverProcess;
import io.rebalance.mover.RunState;
import io.rebalance.ops.status.SlotCounts;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.ToLongFunction;

/**
 * The copy's series: its counters read this process's {@link MoverCounters} at scrape time (nothing is added to the
 * write path), its slot gauges the same state {@code rebalance status} reads, refreshed in the background.
 */
final class CopyMeters {
    private CopyMeters() {}

    static void bind(MeterRegistry registry, Refresher refresher, MoverProcess process, RunState run, long leaseTtlMs) {
        MoverCounters counters = process.counters();
        FunctionCounter.builder("rebalance.copy.rows", counters, MoverCounters::rowsWritten)
                .description("Rows this process wrote into DynamoDB")
                .register(registry);
        FunctionCounter.builder("rebalance.copy.rows.refused", counters, MoverCounters::rowsRefused)
                .description("Rows this process listed as refused: DynamoDB cannot hold them as mapped")
                .register(registry);
        FunctionCounter.builder("rebalance.lease.lost", counters, MoverCounters::leasesLost)
                .description("Leases this process lost before its write or save landed")
                .tag("part", "copy")
                .register(registry);
        Gauge.builder("rebalance.copy.rate.limit.rows.per.second", process, MoverProcess::rateLimit)
                .description("The run's rate limit, rows/s for all processes together; 0 for none")
                .register(registry);
        FunctionCounter.builder("rebalance.copy.write.units", process, MoverProcess::writeUnitsConsumed)
                .description("Write units this process's calls consumed, as DynamoDB reported them")
                .register(registry);
        Gauge.builder("rebalance.copy.write.units.allowed.per.second", process, p -> p.writeUnits()
                        .allowed())
                .description("Write units/s the run's budget allows now, all processes together; 0 for no budget")
                .register(registry);
        Gauge.builder("rebalance.copy.write.units.ceiling.per.second", process, p -> p.writeUnits()
                        .ceiling())
                .description("The budget's ceiling (mover.writeUnits, rate --units), write units/s; 0 for none")
                .register(registry);
        AtomicReference<SlotCounts> slots = new AtomicReference<>(new SlotCounts(0, 0, 0));
        refresher.every("copy slots", () -> slots.set(SlotCounts.read(run, leaseTtlMs)));
        slotGauge(registry, slots, "finished", s -> s.finished());
        slotGauge(registry, slots, "copying", s -> s.inProgress());
        slotGauge(registry, slots, "waiting", s -> s.waiting());
    }

    private static void slotGauge(
            MeterRegistry registry, AtomicReference<SlotCounts> slots, String state, ToLongFunction<SlotCounts> count) {
        Gauge.builder("rebalance.copy.slots", slots, s -> count.applyAsLong(s.get()))
                .description("The run's slots by state, as rebalance status counts them (run-wide: use max())")
                .tag("state", state)
                .register(registry);
    }
}
