package io.rebalance.ops.watch;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.rebalance.cdc.TailStats;
import io.rebalance.protocol.handoff.ReverseStatus;
import io.rebalance.protocol.route.RouteStatus;
import io.rebalance.protocol.route.RoutingTable;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/** The tail's series, read from its {@link TailStats} at scrape time; the reverse stream's lag as it reports it. */
final class TailMeters {
    private TailMeters() {}

    /**
     * @param routes the routing table, read for {@code scopes}: the table's scope, or each part's (ADR 20)
     */
    static void bind(
            MeterRegistry registry,
            Refresher refresher,
            TailStats stats,
            ReverseStatus reverse,
            RoutingTable routes,
            List<String> scopes) {
        FunctionCounter.builder("rebalance.tail.changes.applied", stats, TailStats::events)
                .description("Change events this process applied to DynamoDB")
                .register(registry);
        FunctionCounter.builder("rebalance.tail.changes.held", stats, TailStats::skippedWhileHeld)
                .description("Change events passed over while a cutover held the tail (the reverse stream's writes,"
                        + " and any write that bypassed the Postgres fence)")
                .register(registry);
        FunctionCounter.builder("rebalance.tail.changes.bypassed", stats, TailStats::bypassedWhileHeld)
                .description("Change events passed over while held that the reverse stream did not make: writes"
                        + " that bypassed the Postgres fence, which DynamoDB lacks until reconciled")
                .register(registry);
        FunctionCounter.builder("rebalance.lease.lost", stats, TailStats::leaseLapses)
                .description("Times this process lost the tail lease while streaming")
                .tag("part", "tail")
                .register(registry);
        Gauge.builder("rebalance.tail.lag.seconds", stats, s -> s.lagMs(System.currentTimeMillis()) / 1000.0)
                .description("Age of the oldest change delivered and not yet applied; 0 when none waits")
                .register(registry);
        Gauge.builder("rebalance.tail.slot.retained.wal.bytes", stats, TailStats::retainedWalBytes)
                .description("WAL the replication slot holds back, as last read by the active tail")
                .register(registry);
        Gauge.builder("rebalance.tail.active", stats, s -> s.active() ? 1 : 0)
                .description("1 while this process holds the tail lease and streams, 0 while it stands by")
                .register(registry);
        AtomicLong reverseLagMs = new AtomicLong();
        refresher.every(
                "reverse lag",
                () -> reverseLagMs.set(
                        reverse.read().map(ReverseStatus.Report::lagMs).orElse(0L)));
        Gauge.builder("rebalance.reverse.lag.seconds", reverseLagMs, l -> l.get() / 1000.0)
                .description("The reverse stream's lag (DynamoDB to Postgres) as it last reported it")
                .register(registry);
        Map<String, AtomicLong> route = new LinkedHashMap<>();
        for (String scope : scopes) {
            AtomicLong status = new AtomicLong(-1);
            route.put(scope, status);
            Gauge.builder("rebalance.route.status", status, AtomicLong::get)
                    .description("Where the scope (the table, or one part of it) stands: 0 SOURCE, 1 TARGET, 2 FINAL;"
                            + " -1 while Redis has no route for it (not prepared, or Redis lost it)")
                    .tag("scope", scope)
                    .register(registry);
        }
        refresher.every(
                "routes",
                () -> route.forEach((scope, status) ->
                        status.set(routes.get(scope).map(r -> code(r.status())).orElse(-1L))));
    }

    private static long code(RouteStatus status) {
        return switch (status) {
            case SOURCE -> 0;
            case TARGET -> 1;
            case FINAL -> 2;
        };
    }
}
