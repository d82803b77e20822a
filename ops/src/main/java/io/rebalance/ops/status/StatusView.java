package io.rebalance.ops.status;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.cdc.TailMembers;
import io.rebalance.cdc.TailStatus;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.copy.CopyStatus;
import io.rebalance.core.copy.RunPlan;
import io.rebalance.core.refused.RefusedRows;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.source.SourceSession;
import io.rebalance.mover.RunState;
import io.rebalance.mover.SlotStore;
import io.rebalance.mover.WriteUnitBudget;
import io.rebalance.ops.Connections;
import io.rebalance.protocol.fence.FenceWriter;
import io.rebalance.protocol.fence.PostgresFence;
import io.rebalance.protocol.keyspace.TailKeys;
import io.rebalance.verifier.SlotResult;
import io.rebalance.verifier.VerificationStore;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The run as Redis holds it, assembled for {@code rebalance status}: status, slots, rows, rate, ETA, processes and
 * their leases, verification, the tail, refused rows and the route. Reads only. The map's fields are those of
 * {@code status --json} (docs/cli.md, docs/schemas/status.schema.json).
 */
public final class StatusView {
    private static final ObjectMapper JSON = new ObjectMapper();

    private StatusView() {}

    public static Map<String, Object> of(MigrationConfig config, Connections c) throws Exception {
        RunState run = c.runState();
        SlotStore slots = c.coordinator().slots();
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("prefix", run.name());
        Map<String, Object> coordinator = new LinkedHashMap<>();
        coordinator.put("kind", c.coordinator().kind());
        coordinator.put("where", c.coordinator().where());
        v.put("coordinator", coordinator);
        v.put("status", run.status().name());
        RunPlan plan = run.plan();
        v.put("plan", plan);
        CopyStatus progress = run.progress();
        List<Map<String, Object>> processes = new ArrayList<>();
        List<Map<String, Object>> leased = new ArrayList<>();
        for (var e : run.liveProcesses(config.mover().leaseTtl().toMillis()).entrySet()) {
            JsonNode info = JSON.readTree(e.getValue());
            Map<String, Object> p = new LinkedHashMap<>();
            p.put("id", e.getKey());
            p.put("host", info.path("host").asText());
            p.put("pid", info.path("pid").asLong());
            p.put("workers", info.path("workers").asInt());
            p.put("keeper", info.path("keeper").asBoolean());
            p.put("rowsWritten", info.path("rows").asLong());
            processes.add(p);
            for (JsonNode s : info.path("slots")) {
                String[] slotAndOwner = s.asText().split(" ", 2);
                Map<String, String> state = slots.state(Slot.parse(slotAndOwner[0]));
                Map<String, Object> l = new LinkedHashMap<>();
                l.put("slot", slotAndOwner[0]);
                l.put("holder", slotAndOwner.length > 1 ? slotAndOwner[1] : e.getKey());
                l.put("lastId", state.getOrDefault("last_id", ""));
                l.put("rows", Long.parseLong(state.getOrDefault("rows", "0")));
                if (state.containsKey("error")) l.put("error", state.get("error"));
                leased.add(l);
            }
        }
        SlotCounts counts = SlotCounts.of(plan, progress, leased.size());
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("total", counts.total());
        s.put("finished", counts.finished());
        s.put("inProgress", counts.inProgress());
        s.put("left", counts.waiting());
        s.put("watermark", progress.watermark());
        v.put("slots", s);
        Map<String, Object> rows = new LinkedHashMap<>();
        rows.put("copied", run.rowsCopied());
        rows.put("estimatedTotal", plan == null ? 0 : plan.estimatedRows());
        // the keeper publishes rate and ETA while it runs; with no process left they are the last ones, not now's
        rows.put("perSecond", processes.isEmpty() ? 0 : progress.rate());
        rows.put("etaSeconds", processes.isEmpty() ? -1 : progress.etaSeconds());
        v.put("rows", rows);
        v.put("rateLimit", run.rateLimit());
        v.put("writeUnits", writeUnits(c.coordinator().budget().read()));
        v.put("processes", processes);
        v.put("leases", leased);
        v.put("events", run.events(10).stream().map(StatusView::stamped).toList());
        v.put("verification", verification(c.verifications()));
        v.put("refused", refused(c.refusedRows()));
        if (config.mover().coordinatedByPostgres()) { // neither a tail nor a cutover runs without Redis
            v.put("tail", tail(new TailStatus.Report(Map.of(), null), 0));
            v.put("routing", RoutingStatus.none());
        } else {
            v.put(
                    "tail",
                    tail(c, config.redis().keyspace().tail(), config.tail().leaseTtl()));
            Map<String, Object> routing =
                    RoutingStatus.of(c.redis(), config.redis().keyspace());
            routing.put("fenceTrigger", fenceTrigger(config));
            v.put("routing", routing);
        }
        return v;
    }

    /**
     * Whether the Postgres fence's trigger guards the moved table (and each partition), once a scope was prepared:
     * {@code state} is {@code none} (no fence yet), {@code ready} (the fence is open: the flip enables it), {@code in
     * place} (the fence is closed and it is enabled on every table), {@code missing} (with the gaps) or {@code unknown}
     * (with why it could not be read).
     */
    static Map<String, Object> fenceTrigger(MigrationConfig config) {
        Map<String, Object> t = new LinkedHashMap<>();
        PostgresFence fence = new PostgresFence(config.cutover().pgFence());
        boolean parted = config.cutover().partMap().parted();
        t.put("table", config.source().table());
        t.put(
                "trigger",
                parted ? fence.trigger().parts().name() : fence.trigger().name());
        try (Connection pg = new SourceSession(config.source()).openForPreflight()) {
            // a table moved part by part: in place once any part's fence is closed, each part's gaps together
            boolean prepared = false;
            boolean closed = false;
            List<String> gaps = new ArrayList<>();
            for (String scope :
                    config.cutover().partMap().scopes(config.cutover().scope())) {
                var state = fence.find(pg, scope);
                if (state.isEmpty()) continue;
                prepared = true;
                closed |= state.get().writer() != FenceWriter.APP;
                gaps.addAll(
                        parted
                                ? fence.trigger()
                                        .parts()
                                        .gaps(pg, config.source().table(), scope)
                                : fence.trigger().gaps(pg, config.source().table(), scope));
            }
            if (!prepared) {
                t.put("state", "none");
                t.put("gaps", List.of());
                return t;
            }
            gaps = gaps.stream().distinct().toList();
            t.put("state", !gaps.isEmpty() ? "missing" : closed ? "in place" : "ready");
            t.put("gaps", gaps);
        } catch (SQLException | RuntimeException e) {
            t.put("state", "unknown");
            t.put("gaps", List.of(String.valueOf(e.getMessage())));
        }
        return t;
    }

    /** The run's write-unit budget: its ceiling, the rate allowed now, what the copy consumes, throttling met. */
    static Map<String, Object> writeUnits(WriteUnitBudget.Snapshot b) {
        Map<String, Object> w = new LinkedHashMap<>();
        w.put("ceiling", b.ceiling());
        w.put("allowed", Math.round(b.allowed()));
        w.put("consumedPerSecond", Math.round(b.consumedPerSecond()));
        w.put("consumed", Math.round(b.consumed()));
        w.put("throttles", b.throttles());
        w.put("cuts", b.cuts());
        w.put("onDemandCap", Math.round(b.rampCap()));
        return w;
    }

    /** An event as stored ({@code <epoch ms> <what>}) with its time written for people. */
    static String stamped(String event) {
        int space = event.indexOf(' ');
        try {
            long ms = Long.parseLong(space < 0 ? event : event.substring(0, space));
            return Instant.ofEpochMilli(ms) + (space < 0 ? "" : event.substring(space));
        } catch (NumberFormatException e) {
            return event;
        }
    }

    /**
     * The change stream as the active tail last published it, who holds its lease, and how many tails stand by to
     * take over (seen within {@code leaseTtl}).
     */
    public static Map<String, Object> tail(Connections c, TailKeys keys, Duration leaseTtl) {
        TailStatus.Report st = TailStatus.read(c.redis(), keys);
        return tail(st, new TailMembers(c.redis(), keys).standingBy(leaseTtl, st.leaseHolder()));
    }

    private static Map<String, Object> tail(TailStatus.Report st, long standingBy) {
        Map<String, Object> t = new LinkedHashMap<>();
        t.put("leaseHolder", st.leaseHolder() == null ? "" : st.leaseHolder());
        t.put("standingBy", standingBy);
        long now = System.currentTimeMillis();
        t.put("running", st.running(now));
        t.put("publishedAgoMs", st.updatedMs() == 0 ? -1 : now - st.updatedMs());
        t.putAll(st.typed());
        return t;
    }

    /** The rows DynamoDB cannot hold, as listed by whoever met them: the count and the first {@value #REFUSED_SHOWN}. */
    public static Map<String, Object> refused(RefusedRows refused) {
        List<RefusedRows.Refusal> all = refused.all();
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("count", all.size());
        v.put("rows", all.subList(0, Math.min(REFUSED_SHOWN, all.size())));
        return v;
    }

    public static final int REFUSED_SHOWN = 100;

    /** The latest verification of each slot that has one: counts by verdict, and the slots that do not match. */
    public static Map<String, Object> verification(VerificationStore store) {
        Map<String, VerificationStore.Stored> all = store.all();
        Map<String, Long> counts = new LinkedHashMap<>();
        for (SlotResult.Verdict verdict : SlotResult.Verdict.values()) counts.put(verdict.name(), 0L);
        List<Map<String, Object>> failing = new ArrayList<>();
        long latest = 0;
        for (VerificationStore.Stored s : all.values()) {
            counts.merge(s.verdict().name(), 1L, Long::sum);
            latest = Math.max(latest, s.atMillis());
            if (s.verdict() != SlotResult.Verdict.MATCH) {
                Map<String, Object> f = new LinkedHashMap<>();
                f.put("slot", s.slot());
                f.put("verdict", s.verdict().name());
                f.put("differences", s.differenceCount());
                f.put("at", Instant.ofEpochMilli(s.atMillis()).toString());
                f.put("walLsn", s.walLsn());
                if (s.error() != null) f.put("error", s.error());
                failing.add(f);
            }
        }
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("slotsVerified", all.size());
        v.put("counts", counts);
        v.put("latest", latest == 0 ? "" : Instant.ofEpochMilli(latest).toString());
        v.put("notMatching", failing);
        return v;
    }
}
