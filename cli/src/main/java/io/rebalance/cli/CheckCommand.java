package io.rebalance.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.rebalance.core.Finding;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.slot.SlotRange;
import io.rebalance.core.source.SourceTable;
import io.rebalance.core.source.TableSurvey;
import io.rebalance.core.source.TableSurvey.Refused;
import io.rebalance.core.source.TableSurvey.SlotSurvey;
import io.rebalance.core.source.TableSurvey.Totals;
import io.rebalance.ops.CheckRun;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code rebalance check}: before anything is written, what the migration would meet, computed in Postgres without
 * moving a row (docs/check.md). It connects to Postgres only: nothing in Redis or DynamoDB is read or written.
 */
@Command(
        name = "check",
        description = "Before a copy: rows DynamoDB would refuse (by slot, with ids), rows and item sizes per slot,"
                + " the write units and time the copy takes, and what the tail needs of Postgres. Reads Postgres"
                + " only; writes nothing. Exit 0: nothing blocks; 1: something would block (each finding says the"
                + " way out).",
        footerHeading = "%nExamples:%n",
        footer = {
            "  rebalance check -c migration.yaml",
            "  rebalance check -c migration.yaml --rate 2000 --json > check.json"
        })
final class CheckCommand implements Callable<Integer> {
    /** Something would block the migration; every finding names its way out. */
    static final int BLOCKED = 1;

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    /** Slots with refused rows listed on the terminal; {@code --json} lists them all. */
    private static final int SHOWN = 20;

    @Mixin
    ConfigOptions options;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--json", description = "Print the report as JSON (every slot) instead of text.")
    boolean json;

    @Option(
            names = "--rate",
            paramLabel = "ROWS_PER_SECOND",
            description = "Estimate the copy's time at this many rows/s; config mover.rateLimit, env"
                    + " REBALANCE_MOVER_RATE_LIMIT (default 0: at DynamoDB's on-demand starting limits only).")
    Long rate;

    @Option(
            names = "--parallel",
            paramLabel = "N",
            description =
                    "Survey this many slots at once, each on its own Postgres session; config verify.parallel, env"
                            + " REBALANCE_VERIFY_PARALLEL (default 4).")
    Integer parallel;

    @Override
    public Integer call() throws Exception {
        if (rate != null && rate < 0) { // 0, as in mover.rateLimit, is no rate: the on-demand limits only
            throw new RebalanceException(
                    ErrorCode.CONFIG_INVALID,
                    "--rate " + rate + " is not a rate; give rows per second, 0 for none (or leave it out to use"
                            + " mover.rateLimit)");
        }
        if (parallel != null && (parallel < 1 || parallel > 64)) { // verify.parallel's range
            throw new RebalanceException(
                    ErrorCode.CONFIG_INVALID,
                    "--parallel " + parallel + " is not a number of sessions; give 1 to 64 (or leave it out to use"
                            + " verify.parallel)");
        }
        MigrationConfig config = options.load();
        int sessions = parallel != null ? parallel : config.verify().parallel();
        long rowsPerSecond = rate != null ? rate : config.mover().rateLimit();
        PrintWriter err = spec.commandLine().getErr();
        CheckRun.Result r = CheckRun.run(config, sessions, err::println);
        Totals totals = r.totals();
        Map<String, Object> report =
                report(config, r.table(), r.range(), r.slots(), totals, rowsPerSecond, r.findings());
        if (json) spec.commandLine().getOut().println(JSON.writeValueAsString(report));
        else print(spec.commandLine().getOut(), report, r.slots(), totals, rowsPerSecond, r.findings());
        return r.blocking() ? BLOCKED : 0;
    }

    private static Map<String, Object> report(
            MigrationConfig config,
            SourceTable table,
            SlotRange range,
            List<SlotSurvey> slots,
            Totals t,
            long rowsPerSecond,
            List<Finding> findings) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("table", table.name());
        out.put("target", config.target().table());
        out.put("blocking", findings.stream().anyMatch(f -> f.level() == Finding.Level.BLOCKING));
        Map<String, Object> range1 = new LinkedHashMap<>();
        range1.put("count", range.count());
        range1.put("oldest", range.oldest().name());
        range1.put("newest", range.newest().name());
        range1.put("empty", slots.stream().filter(s -> s.rows() == 0).count());
        out.put("slots", range1);
        out.put("rows", t.rows());
        out.put("storedRows", t.storedRows());
        out.put("refusedRows", t.refusedRows());
        Map<String, Object> bytes = new LinkedHashMap<>();
        bytes.put("total", t.bytes());
        bytes.put("average", t.storedRows() == 0 ? 0 : t.bytes() / t.storedRows());
        bytes.put("max", t.maxItemBytes());
        out.put("itemBytes", bytes);
        Map<String, Object> units = new LinkedHashMap<>();
        units.put("table", t.tableUnits());
        units.put("index", t.indexUnits());
        units.put("total", t.writeUnits());
        out.put("writeUnits", units);
        Map<String, Object> duration = new LinkedHashMap<>();
        if (rowsPerSecond > 0) {
            duration.put(
                    "atRate",
                    ordered("rowsPerSecond", rowsPerSecond, "seconds", round(t.secondsAtRows(rowsPerSecond))));
        } else {
            duration.put("atRate", null);
        }
        duration.put(
                "atOnDemandStart",
                ordered(
                        "writeUnitsPerSecond",
                        TableSurvey.ON_DEMAND_START_UNITS_PER_SECOND,
                        "seconds",
                        round(t.secondsAtOnDemandStart())));
        out.put("duration", duration);
        List<Map<String, Object>> refused = new ArrayList<>();
        for (Refused r : t.refused()) refused.add(refused(r, true));
        out.put("refused", refused);
        List<Map<String, Object>> bySlot = new ArrayList<>();
        for (SlotSurvey s : slots) {
            if (s.rows() == 0) continue;
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("slot", s.slot().name());
            one.put("rows", s.rows());
            one.put("storedRows", s.storedRows());
            one.put("itemBytes", s.bytes());
            one.put("maxItemBytes", s.maxItemBytes());
            one.put("writeUnits", s.tableUnits() + s.indexUnits());
            one.put("refused", s.refused().stream().map(r -> refused(r, false)).toList());
            bySlot.add(one);
        }
        out.put("bySlot", bySlot);
        List<Map<String, Object>> fs = new ArrayList<>();
        for (Finding f : findings) {
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("check", f.check());
            one.put("level", f.level().name());
            one.put("detail", f.detail());
            fs.add(one);
        }
        out.put("findings", fs);
        return out;
    }

    private static Map<String, Object> refused(Refused r, boolean withWayOut) {
        Map<String, Object> one = new LinkedHashMap<>();
        one.put("reason", r.refusal().code());
        one.put("column", r.column());
        one.put("rows", r.rows());
        one.put("firstId", r.firstId());
        one.put("lastId", r.lastId());
        if (withWayOut) one.put("wayOut", r.refusal().wayOut(r.column()));
        return one;
    }

    private static Map<String, Object> ordered(String k1, Object v1, String k2, Object v2) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put(k1, v1);
        m.put(k2, v2);
        return m;
    }

    private static double round(double seconds) {
        return Math.round(seconds * 10) / 10.0;
    }

    private void print(
            PrintWriter out,
            Map<String, Object> report,
            List<SlotSurvey> slots,
            Totals t,
            long rowsPerSecond,
            List<Finding> findings) {
        List<Long> perSlot = slots.stream().map(SlotSurvey::rows).sorted().toList();
        out.printf(
                Locale.ROOT,
                "check %s -> DynamoDB %s (read only: nothing was written)%n",
                report.get("table"),
                report.get("target"));
        out.printf(
                Locale.ROOT,
                "slots    %,d (%s .. %s), %,d empty; rows per slot min %,d, median %,d, max %,d%n",
                t.slots(),
                slots.get(slots.size() - 1).slot().name(),
                slots.get(0).slot().name(),
                perSlot.stream().filter(n -> n == 0).count(),
                perSlot.get(0),
                perSlot.get(perSlot.size() / 2),
                perSlot.get(perSlot.size() - 1));
        out.printf(Locale.ROOT, "rows     %,d: %,d to write, %,d refused%n", t.rows(), t.storedRows(), t.refusedRows());
        out.printf(
                Locale.ROOT,
                "items    %s in all, average %s, largest %s%n",
                bytes(t.bytes()),
                bytes(t.storedRows() == 0 ? 0 : t.bytes() / t.storedRows()),
                bytes(t.maxItemBytes()));
        out.printf(
                Locale.ROOT,
                "writes   %,d write units (table %,d, slot index %,d)%n",
                t.writeUnits(),
                t.tableUnits(),
                t.indexUnits());
        String atRate = rowsPerSecond > 0
                ? String.format(
                        Locale.ROOT, "%s at %,d rows/s", duration(t.secondsAtRows(rowsPerSecond)), rowsPerSecond)
                : "no rate limit set (mover.rateLimit; --rate N estimates at N rows/s)";
        out.printf(
                Locale.ROOT,
                "time     %s; %s at a new on-demand table's %,d write units/s%n",
                atRate,
                duration(t.secondsAtOnDemandStart()),
                TableSurvey.ON_DEMAND_START_UNITS_PER_SECOND);
        List<SlotSurvey> withRefused =
                slots.stream().filter(s -> !s.refused().isEmpty()).toList();
        if (!withRefused.isEmpty()) {
            out.printf(Locale.ROOT, "%nrefused rows by slot:%n");
            out.printf(Locale.ROOT, "  %-12s %8s  %-16s %-12s %s%n", "SLOT", "ROWS", "COLUMN", "REASON", "IDS");
            int shown = 0;
            for (SlotSurvey s : withRefused) {
                for (Refused r : s.refused()) {
                    if (shown++ == SHOWN) break;
                    out.printf(
                            Locale.ROOT,
                            "  %-12s %,8d  %-16s %-12s %s .. %s%n",
                            s.slot().name(),
                            r.rows(),
                            r.column() == null ? "(item)" : r.column(),
                            r.refusal().code(),
                            r.firstId(),
                            r.lastId());
                }
            }
            if (shown > SHOWN) out.printf("  ... (`rebalance check --json` lists every slot)%n");
        }
        out.printf(Locale.ROOT, "%nfindings:%n");
        for (Finding f : findings) {
            out.printf(Locale.ROOT, "  %-8s %-18s %s%n", f.level(), f.check(), f.detail());
        }
        long blocking = findings.stream()
                .filter(f -> f.level() == Finding.Level.BLOCKING)
                .count();
        out.println();
        out.println(
                blocking == 0
                        ? "nothing blocks the migration"
                        : "BLOCKED: " + blocking + " finding" + (blocking == 1 ? "" : "s")
                                + " would block the migration; each says the way out");
    }

    private static String bytes(long n) {
        if (n < 10_000) return String.format(Locale.ROOT, "%,d B", n);
        if (n < 10_000_000) return String.format(Locale.ROOT, "%,.1f KB", n / 1024.0);
        if (n < 10_000_000_000L) return String.format(Locale.ROOT, "%,.1f MB", n / 1048576.0);
        return String.format(Locale.ROOT, "%,.1f GB", n / 1073741824.0);
    }

    private static String duration(double seconds) {
        if (seconds < 120) return String.format(Locale.ROOT, "%.0f s", Math.ceil(seconds));
        if (seconds < 7200) return String.format(Locale.ROOT, "%.0f min", Math.ceil(seconds / 60));
        if (seconds < 172_800) return String.format(Locale.ROOT, "%.1f h", seconds / 3600);
        return String.format(Locale.ROOT, "%.1f days", seconds / 86_400);
    }
}
