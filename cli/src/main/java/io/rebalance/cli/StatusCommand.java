package io.rebalance.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.rebalance.cdc.TailKeys;
import io.rebalance.cdc.TailProgress;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.refused.RefusedRows;
import io.rebalance.core.retry.Retrier;
import io.rebalance.core.slot.Slot;
import io.rebalance.mover.RunPlan;
import io.rebalance.mover.RunState;
import io.rebalance.mover.SlotStore;
import io.rebalance.verifier.SlotResult;
import io.rebalance.verifier.VerificationStore;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code rebalance status}: the run as Redis holds it: status, slots done / in progress / left, rows, rate, ETA,
 * which process holds which slot lease and how far it is, the rate limit and recent events. Reads only.
 */
@Command(
        name = "status",
        description = "Show the run: status, slots, rows, rate, ETA, processes and their leases, the tail, the route.",
        footerHeading = "%nExamples:%n",
        footer = {
            "  rebalance status -c migration.yaml",
            "  watch -n 5 rebalance status -c migration.yaml",
            "  rebalance status -c migration.yaml --json | jq .tail"
        })
final class StatusCommand implements Callable<Integer> {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    @Mixin
    ConfigOptions options;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--json", description = "Print JSON instead of text (docs/cli.md#status---json).")
    boolean json;

    @Override
    public Integer call() throws Exception {
        MigrationConfig config = options.load();
        try (Connections c = new Connections(config, 2)) {
            Map<String, Object> view = view(config, c);
            PrintWriter out = spec.commandLine().getOut();
            if (json) out.println(JSON.writeValueAsString(view));
            else render(view, out);
            return 0;
        }
    }

    static Map<String, Object> view(MigrationConfig config, Connections c) throws Exception {
        RunState run = c.runState();
        SlotStore slots = new SlotStore(
                c.redis(),
                run.keys(),
                Retrier.standard(),
                config.mover().leaseTtlDuration(),
                config.mover().stateTtlDuration());
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("prefix", config.redis().prefix());
        v.put("status", run.status().name());
        RunPlan plan = run.plan();
        v.put("plan", plan);
        Map<String, String> progress = run.progress();
        long total = plan == null ? 0 : plan.range().count();
        long finished = Long.parseLong(progress.getOrDefault("slots_finished", "0"));
        List<Map<String, Object>> processes = new ArrayList<>();
        List<Map<String, Object>> leased = new ArrayList<>();
        for (var e :
                run.liveProcesses(config.mover().leaseTtlDuration().toMillis()).entrySet()) {
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
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("total", total);
        s.put("finished", finished);
        s.put("inProgress", leased.size());
        s.put("left", Math.max(0, total - finished - leased.size()));
        s.put("watermark", progress.getOrDefault("watermark", ""));
        v.put("slots", s);
        Map<String, Object> rows = new LinkedHashMap<>();
        rows.put("copied", run.rowsCopied());
        rows.put("estimatedTotal", plan == null ? 0 : plan.estimatedRows());
        rows.put("perSecond", Long.parseLong(progress.getOrDefault("rate", "0")));
        rows.put("etaSeconds", Long.parseLong(progress.getOrDefault("eta_s", "-1")));
        v.put("rows", rows);
        v.put("rateLimit", run.rateLimit());
        v.put("processes", processes);
        v.put("leases", leased);
        v.put("events", run.events(10));
        v.put(
                "verification",
                verification(new VerificationStore(c.redis(), config.redis().prefix())));
        v.put("tail", tail(c, new TailKeys(config.redis().prefix())));
        v.put("refused", refused(new RefusedRows(c.redis(), config.redis().prefix())));
        v.put("routing", RoutingView.of(c.redis(), config.redis().prefix()));
        return v;
    }

    /** The change stream as the active tail last published it, and who holds its lease. */
    static Map<String, Object> tail(Connections c, TailKeys keys) {
        Map<String, Object> t = new LinkedHashMap<>();
        Map<String, String> st = c.redis().hgetAll(keys.status());
        String holder = c.redis().get(keys.lease());
        t.put("leaseHolder", holder == null ? "" : holder);
        long updated = Long.parseLong(st.getOrDefault("updated_ms", "0"));
        long now = System.currentTimeMillis();
        long age = updated == 0 ? -1 : now - updated;
        t.put("running", TailProgress.running(st, holder, now));
        t.put("publishedAgoMs", age);
        st.forEach((k, value) -> t.put(k, typed(k, value)));
        return t;
    }

    /** The tail's integer fields as published; the rest are text but for these two. */
    private static final java.util.Set<String> TAIL_INTEGERS = java.util.Set.of(
            "updated_ms",
            "events",
            "lag_ms",
            "last_applied_ms",
            "reconcile_pending",
            "reconciled",
            "apply_retries",
            "commit_waits",
            "skipped_while_held",
            "stream_restarts",
            "refused",
            "lag_bytes",
            "retained_bytes",
            "safe_wal_bytes");

    /** A field of the tail's status hash (all text in Redis) as JSON types it: docs/cli.md documents each. */
    static Object typed(String field, String value) {
        if (TAIL_INTEGERS.contains(field)) return value.isEmpty() ? null : Long.parseLong(value);
        if (field.equals("events_per_sec")) return Double.parseDouble(value);
        if (field.equals("retention_warning")) return Boolean.parseBoolean(value);
        return value;
    }

    /** The rows DynamoDB cannot hold, as listed by whoever met them: the count and the first {@value #REFUSED_SHOWN}. */
    static Map<String, Object> refused(RefusedRows refused) {
        List<RefusedRows.Refusal> all = refused.all();
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("count", all.size());
        v.put("rows", all.subList(0, Math.min(REFUSED_SHOWN, all.size())));
        return v;
    }

    private static final int REFUSED_SHOWN = 100;

    /** The latest verification of each slot that has one: counts by verdict, and the slots that do not match. */
    static Map<String, Object> verification(VerificationStore store) {
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
                f.put("at", java.time.Instant.ofEpochMilli(s.atMillis()).toString());
                f.put("walLsn", s.walLsn());
                if (s.error() != null) f.put("error", s.error());
                failing.add(f);
            }
        }
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("slotsVerified", all.size());
        v.put("counts", counts);
        v.put(
                "latest",
                latest == 0 ? "" : java.time.Instant.ofEpochMilli(latest).toString());
        v.put("notMatching", failing);
        return v;
    }

    @SuppressWarnings("unchecked")
    static void render(Map<String, Object> v, PrintWriter out) {
        RunPlan plan = (RunPlan) v.get("plan");
        long refusedCount = ((Number) ((Map<String, Object>) v.get("refused")).get("count")).longValue();
        out.println("run " + v.get("prefix") + "  status " + v.get("status")
                + ("FINISHED".equals(String.valueOf(v.get("status"))) && refusedCount > 0
                        ? " (copied except " + refusedCount + " refused row" + (refusedCount == 1 ? "" : "s") + ")"
                        : ""));
        if (plan == null) {
            out.println("no run has been planned under this prefix yet: `rebalance copy` starts one");
            printTail((Map<String, Object>) v.get("tail"), out);
            printRefused((Map<String, Object>) v.get("refused"), out);
            RoutingView.print((Map<String, Object>) v.get("routing"), out);
            return;
        }
        Map<String, Object> s = (Map<String, Object>) v.get("slots");
        Map<String, Object> r = (Map<String, Object>) v.get("rows");
        out.printf(
                "table      %s -> DynamoDB %s, slots %s..%s%n",
                plan.table(), plan.targetTable(), plan.newest(), plan.oldest());
        out.printf(
                "slots      %s total, %s finished, %s in progress, %s left (watermark %s)%n",
                s.get("total"),
                s.get("finished"),
                s.get("inProgress"),
                s.get("left"),
                s.get("watermark").toString().isEmpty() ? "none yet" : s.get("watermark"));
        long eta = (Long) r.get("etaSeconds");
        out.printf(
                "rows       %,d copied of ~%,d, %,d rows/s%s%n",
                (Long) r.get("copied"),
                (Long) r.get("estimatedTotal"),
                (Long) r.get("perSecond"),
                eta >= 0 ? ", ETA " + ProgressReporter.human(eta) : "");
        long limit = (Long) v.get("rateLimit");
        out.println("rate limit " + (limit == 0 ? "none" : limit + " rows/s"));
        List<Map<String, Object>> processes = (List<Map<String, Object>>) v.get("processes");
        out.println("processes  " + processes.size() + " live");
        for (Map<String, Object> p : processes) {
            out.printf(
                    "  %s  pid %s  %s workers  %,d rows written%s%n",
                    p.get("id"),
                    p.get("pid"),
                    p.get("workers"),
                    (Long) p.get("rowsWritten"),
                    Boolean.TRUE.equals(p.get("keeper")) ? "  (keeper)" : "");
        }
        for (Map<String, Object> l : (List<Map<String, Object>>) v.get("leases")) {
            out.printf(
                    "  slot %s  held by %s  last_id %s  %,d rows%s%n",
                    l.get("slot"),
                    l.get("holder"),
                    l.get("lastId").toString().isEmpty() ? "-" : l.get("lastId"),
                    (Long) l.get("rows"),
                    l.containsKey("error") ? "  error: " + l.get("error") : "");
        }
        Map<String, Object> ver = (Map<String, Object>) v.get("verification");
        Map<String, Long> counts = (Map<String, Long>) ver.get("counts");
        if ((Integer) ver.get("slotsVerified") == 0) {
            out.println("verified   no slot yet (`rebalance verify --all`)");
        } else {
            out.printf(
                    "verified   %d slots: %d MATCH, %d MISMATCH, %d ERROR (latest %s)%n",
                    (Integer) ver.get("slotsVerified"),
                    counts.get("MATCH"),
                    counts.get("MISMATCH"),
                    counts.get("ERROR"),
                    ver.get("latest"));
            for (Map<String, Object> f : (List<Map<String, Object>>) ver.get("notMatching")) {
                out.printf(
                        "  slot %s  %s  %s differences  at %s%n",
                        f.get("slot"), f.get("verdict"), f.get("differences"), f.get("at"));
            }
        }
        printTail((Map<String, Object>) v.get("tail"), out);
        printRefused((Map<String, Object>) v.get("refused"), out);
        RoutingView.print((Map<String, Object>) v.get("routing"), out);
        List<String> events = (List<String>) v.get("events");
        if (!events.isEmpty()) {
            out.println("recent events");
            events.forEach(e -> out.println("  " + e));
        }
    }

    @SuppressWarnings("unchecked")
    private static void printRefused(Map<String, Object> r, PrintWriter out) {
        int count = (Integer) r.get("count");
        if (count == 0) return;
        out.printf(
                "refused    %d row%s DynamoDB cannot hold (not written; the cutover refuses until none is left). Fix"
                        + " the row or the settings, then `rebalance verify --retry-refused`%n",
                count, count == 1 ? "" : "s");
        List<RefusedRows.Refusal> rows = (List<RefusedRows.Refusal>) r.get("rows");
        for (RefusedRows.Refusal x : rows.subList(0, Math.min(10, rows.size()))) {
            out.printf(
                    "  id %s  slot %s  %s%s  (%s%s)%n",
                    x.id(),
                    x.slot().isEmpty() ? "-" : x.slot(),
                    x.column().isEmpty() ? "" : "column " + x.column() + ": ",
                    x.reason(),
                    x.by(),
                    x.lsn().isEmpty() ? "" : " at " + x.lsn());
        }
        if (count > 10)
            out.printf("  ... and %d more (`rebalance status --json` lists %d)%n", count - 10, REFUSED_SHOWN);
    }

    private static void printTail(Map<String, Object> t, PrintWriter out) {
        if (!t.containsKey("updated_ms")) {
            out.println("tail       not started (`rebalance tail`)");
            return;
        }
        if (!(Boolean) t.get("running")) {
            out.printf(
                    "tail       NOT RUNNING: last published %,d s ago by %s; start `rebalance tail`%n",
                    ((Long) t.get("publishedAgoMs")) / 1000, t.get("owner"));
        } else {
            out.printf(
                    "tail       %s: applied %s, lag %s ms / %s bytes, %s events/s, %s events, reconcile pending %s%n",
                    t.get("leaseHolder"),
                    t.getOrDefault("applied_lsn", "-"),
                    t.get("lag_ms"),
                    t.getOrDefault("lag_bytes", "?"),
                    t.get("events_per_sec"),
                    t.get("events"),
                    t.get("reconcile_pending"));
        }
        if (t.containsKey("wal_status")) {
            Object safe = t.get("safe_wal_bytes");
            out.printf(
                    "  slot %s, holds %s bytes of WAL, %s%n",
                    t.get("wal_status"),
                    t.getOrDefault("retained_bytes", "?"),
                    safe == null ? "no max_slot_wal_keep_size" : safe + " bytes more before Postgres invalidates it");
        }
        if (Boolean.TRUE.equals(t.get("retention_warning"))) {
            out.printf(
                    "  WARNING: slot holds %s bytes of WAL back (over tail.retentionWarnMb); a stopped tail pins"
                            + " WAL until the source disk fills: start it, or `rebalance tail --drop-slot`%n",
                    t.get("retained_bytes"));
        }
        if (t.containsKey("truncated_lsn")) {
            out.printf(
                    "  WARNING: the source table was TRUNCATEd at %s and the tail did not empty DynamoDB: run"
                            + " `rebalance verify --all --repair`, or start the migration over%n",
                    t.get("truncated_lsn"));
        }
        if (t.containsKey("source_error")) out.println("  source error: " + t.get("source_error"));
    }
}
