package io.rebalance.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.copy.RunPlan;
import io.rebalance.core.refused.RefusedRows;
import io.rebalance.ops.Connections;
import io.rebalance.ops.CopyOnly;
import io.rebalance.ops.status.StatusView;
import java.io.PrintWriter;
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
public final class StatusCommand implements Callable<Integer> {
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
            Map<String, Object> view = StatusView.of(config, c);
            PrintWriter out = spec.commandLine().getOut();
            if (json) out.println(JSON.writeValueAsString(view));
            else render(view, out);
            return 0;
        }
    }

    @SuppressWarnings("unchecked")
    public static void render(Map<String, Object> v, PrintWriter out) {
        RunPlan plan = (RunPlan) v.get("plan");
        long refusedCount = ((Number) ((Map<String, Object>) v.get("refused")).get("count")).longValue();
        out.println("run " + v.get("prefix") + "  status " + v.get("status")
                + ("FINISHED".equals(String.valueOf(v.get("status"))) && refusedCount > 0
                        ? " (copied except " + refusedCount + " refused row" + (refusedCount == 1 ? "" : "s") + ")"
                        : ""));
        Map<String, Object> coordinator = (Map<String, Object>) v.get("coordinator");
        out.println("coordinator " + coordinator.get("kind") + ": " + coordinator.get("where"));
        boolean copyOnly = "postgres".equals(coordinator.get("kind"));
        if (plan == null) {
            out.println("no run has been planned "
                    + (copyOnly
                            ? "in this schema yet: `rebalance copy --no-concurrent-writers` starts one"
                            : "under this prefix yet: `rebalance copy` starts one"));
            printTailAndRouting(v, copyOnly, out);
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
        printWriteUnits((Map<String, Object>) v.get("writeUnits"), out);
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
        printTailAndRouting(v, copyOnly, out);
        List<String> events = (List<String>) v.get("events");
        if (!events.isEmpty()) {
            out.println("recent events");
            events.forEach(e -> out.println("  " + e));
        }
    }

    @SuppressWarnings("unchecked")
    private static void printWriteUnits(Map<String, Object> w, PrintWriter out) {
        long ceiling = (Long) w.get("ceiling");
        long consumed = (Long) w.get("consumed");
        if (ceiling == 0 && consumed == 0) return;
        long cap = (Long) w.get("onDemandCap");
        out.printf(
                "write units %,d/s consumed%s; %,d in all, %,d throttling report%s, rate lowered %,d time%s%n",
                (Long) w.get("consumedPerSecond"),
                ceiling == 0
                        ? " (no budget: mover.writeUnits)"
                        : String.format(
                                " of %,d/s allowed (ceiling %,d%s)",
                                (Long) w.get("allowed"),
                                ceiling,
                                cap > 0 ? String.format(", on-demand ramp %,d", cap) : ""),
                consumed,
                (Long) w.get("throttles"),
                (Long) w.get("throttles") == 1 ? "" : "s",
                (Long) w.get("cuts"),
                (Long) w.get("cuts") == 1 ? "" : "s");
    }

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
            out.printf(
                    "  ... and %d more (`rebalance status --json` lists %d)%n", count - 10, StatusView.REFUSED_SHOWN);
    }

    /** The tail, the refused rows and the routing; a copy Postgres coordinates has neither tail nor routing. */
    @SuppressWarnings("unchecked")
    private static void printTailAndRouting(Map<String, Object> v, boolean copyOnly, PrintWriter out) {
        if (copyOnly) out.println("tail       none: " + CopyOnly.WAY_ON);
        else printTail((Map<String, Object>) v.get("tail"), out);
        printRefused((Map<String, Object>) v.get("refused"), out);
        if (!copyOnly) RoutingLines.print((Map<String, Object>) v.get("routing"), out);
    }

    private static void printTail(Map<String, Object> t, PrintWriter out) {
        long standingBy = (Long) t.get("standingBy");
        String standby = standingBy == 0 ? "" : "; " + standingBy + " standing by";
        if (!t.containsKey("updated_ms")) {
            out.println("tail       not started (`rebalance tail`)" + standby);
            return;
        }
        if (!(Boolean) t.get("running")) {
            out.printf(
                    "tail       NOT RUNNING: last published %,d s ago by %s; start `rebalance tail`%s%n",
                    ((Long) t.get("publishedAgoMs")) / 1000, t.get("owner"), standby);
        } else {
            out.printf(
                    "tail       %s: applied %s, lag %s ms / %s bytes, %s events/s, %s events, reconcile pending %s%s%n",
                    t.get("leaseHolder"),
                    t.getOrDefault("applied_lsn", "-"),
                    t.get("lag_ms"),
                    t.getOrDefault("lag_bytes", "?"),
                    t.get("events_per_sec"),
                    t.get("events"),
                    t.get("reconcile_pending"),
                    standby);
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
