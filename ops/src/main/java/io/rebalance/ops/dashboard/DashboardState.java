package io.rebalance.ops.dashboard;

import io.rebalance.cdc.ChangedSlots;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.copy.RunPlan;
import io.rebalance.core.redis.SampleLog;
import io.rebalance.cutover.CutoverJournal;
import io.rebalance.mover.RunState;
import io.rebalance.ops.Connections;
import io.rebalance.ops.status.StatusView;
import io.rebalance.protocol.keyspace.Keyspace;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What the dashboard shows, read from the run's state store and nothing else, never the source table nor DynamoDB:
 * everything {@code rebalance status --json} says, plus every slot's state, the last hour's history and the last
 * cutover's steps. A copy Postgres coordinates ({@code mover.coordinator: postgres}) has no tail, no cutover and no
 * history in Redis: the page shows its slots and copy, and those parts empty.
 */
public final class DashboardState {
    private DashboardState() {}

    public static Map<String, Object> read(MigrationConfig config, Connections c) throws Exception {
        long now = System.currentTimeMillis();
        boolean copyOnly = config.mover().coordinatedByPostgres();
        Keyspace keyspace = config.redis().keyspace();
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("generatedMs", now);
        v.put("sourceTable", config.source().table());
        v.put("targetTable", config.target().table());
        v.putAll(StatusView.of(config, c));
        RunState run = c.runState();
        Set<String> refusedSlots = new HashSet<>();
        c.refusedRows().all().forEach(r -> refusedSlots.add(r.slot()));
        RunPlan plan = run.plan();
        SlotHeatmap.Heatmap heatmap = SlotHeatmap.read(
                c.coordinator().slots(),
                plan,
                run::watermark,
                c.verifications().all(),
                refusedSlots,
                copyOnly || plan == null
                        ? new TreeSet<>()
                        : new ChangedSlots(c.redis(), keyspace.tail(), null)
                                .positions()
                                .slots());
        Map<String, Object> h = new LinkedHashMap<>();
        h.put("newest", heatmap.newest());
        h.put("states", heatmap.states());
        h.put("legend", new TreeMap<>(SlotHeatmap.STATES));
        v.put("heatmap", h);
        Map<String, Object> history = new LinkedHashMap<>();
        history.put(
                "copy",
                copyOnly
                        ? List.of()
                        : samples(new SampleLog(c.redis(), keyspace.run().history())));
        history.put(
                "tail",
                copyOnly
                        ? List.of()
                        : samples(new SampleLog(c.redis(), keyspace.tail().history())));
        v.put("history", history);
        String scope = config.cutover().scope();
        v.put(
                "cutover",
                copyOnly ? Map.of() : CutoverSteps.read(new CutoverJournal(c.redis(), keyspace.scope(scope)), now));
        return v;
    }
    /** [[epoch ms, value, value...], ...] oldest first: the copy's rows and rows/s, the tail's lag ms and WAL bytes. */
    private static List<long[]> samples(SampleLog log) {
        return log.read().stream()
                .map(s -> {
                    long[] row = new long[s.values().length + 1];
                    row[0] = s.atMs();
                    System.arraycopy(s.values(), 0, row, 1, s.values().length);
                    return row;
                })
                .toList();
    }
}
