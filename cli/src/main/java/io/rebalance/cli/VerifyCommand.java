package io.rebalance.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.refused.RefusedRows;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.slot.SlotRange;
import io.rebalance.core.source.UnslottedRows;
import io.rebalance.ops.verify.VerifyRun;
import io.rebalance.ops.watch.Watch;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.route.StoreOfRecord;
import io.rebalance.verifier.Difference;
import io.rebalance.verifier.SlotResult;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code rebalance verify}: proves, slot by slot, that DynamoDB holds exactly what Postgres holds, by comparing a
 * fingerprint Postgres computes with one computed from the slot's items (docs/fingerprint.md). Exit codes follow
 * diff(1): 0 every slot matches, 1 a slot does not, 2 verification itself failed (bad input included).
 */
@Command(
        name = "verify",
        description = "Prove DynamoDB holds exactly what Postgres holds, slot by slot; pinpoint and repair differences."
                + " Exit 0: all match; 1: a mismatch; 2: an error.",
        footerHeading = "%nExamples:%n",
        footer = {
            "  rebalance verify -c migration.yaml --all",
            "  rebalance verify -c migration.yaml --slot 20241020.00..20241020.23 --repair",
            "  rebalance verify -c migration.yaml --retry-refused"
        })
final class VerifyCommand implements Callable<Integer> {
    static final int MATCH = 0;
    static final int MISMATCH = 1;
    static final int ERROR = 2;
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    @Mixin
    ConfigOptions options;

    @Mixin
    MetricsOption metrics;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(
            names = "--slot",
            paramLabel = "SLOT",
            description = "A slot like 20241020.02, or a range like 20241020.00..20241020.23; only slots of the run (an"
                    + " hour from its first to its last, or notime), else exit 2 naming them. Repeatable.")
    List<String> slots = new ArrayList<>();

    @Option(
            names = "--all",
            description = "Every slot that holds rows or items: the run's plan, the table's hours now (newer ones"
                    + " included) and every slot the tail wrote; with slots.from and slots.to both set, that window.")
    boolean all;

    @Option(
            names = "--parallel",
            paramLabel = "N",
            description = "Slots verified at once; config verify.parallel, env REBALANCE_VERIFY_PARALLEL (default 4).")
    Integer parallel;

    @Option(names = "--repair", description = "Re-copy the ids that differ, delete extra items, then verify again.")
    boolean repair;

    @Option(
            names = "--retry-refused",
            description = "Write the refused rows (`rebalance status` lists them) again from Postgres as it is now,"
                    + " once the rows or the settings are fixed; rows DynamoDB still cannot hold stay listed. Alone,"
                    + " exit 0 when none is left and 1 otherwise; with --slot or --all, the slots are verified after.")
    boolean retryRefused;

    @Option(
            names = "--part",
            paramLabel = "PART",
            description = "Only the rows of this part of a table moved part by part (cutover.parts), on both sides;"
                    + " reported, not saved (the cutover's pre-check reads verdicts over every part Postgres keeps).")
    String part;

    @Option(names = "--json", description = "Print JSON instead of a table.")
    boolean json;

    /** Which store holds the truth, read once per run: Postgres until a cutover opens DynamoDB to applications. */
    private StoreOfRecord storeOfRecord;

    /** With --all: rows no slot holds (outside slots.from/slots.to), which no slot's verdict covers. */
    private UnslottedRows unslotted;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        try {
            return run(out, err);
        } catch (RebalanceException e) {
            err.println("error: " + e.getMessage() + " [" + e.code() + "]");
            if (options.verbose) e.printStackTrace(err);
            return ERROR;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("error: interrupted");
            return ERROR;
        } catch (Exception e) {
            err.println("error: verification failed: " + e + (options.verbose ? "" : " (--verbose for details)"));
            if (options.verbose) e.printStackTrace(err);
            return ERROR;
        }
    }

    private int run(PrintWriter out, PrintWriter err) throws Exception {
        MigrationConfig config = options.load(metrics.into(new HashMap<>()));
        if (slots.isEmpty() && !all && !retryRefused) {
            throw new RebalanceException(
                    ErrorCode.CONFIG_INVALID,
                    "say which slots to verify: --slot 20241020.02, --slot 20241020.00..20241020.23, or --all (or"
                            + " --retry-refused)");
        }
        int threads = parallel != null ? parallel : config.verify().parallel();
        if (threads < 1 || threads > 64) {
            throw new RebalanceException(
                    ErrorCode.CONFIG_INVALID, "--parallel=" + threads + " is not valid; use a number from 1 to 64");
        }
        try (Watch watch = Watch.start(config, "verify");
                VerifyRun v = VerifyRun.open(config, parseSlots(), all, threads, repair, retryRefused, part)) {
            watch.verify(config, v.results());
            storeOfRecord = v.storeOfRecord();
            unslotted = v.unslotted().orElse(null);
            if (!storeOfRecord.postgres()) {
                err.println("note: " + storeOfRecord.describe() + ". A difference is what Postgres lacks or holds"
                        + " beyond DynamoDB (the reverse stream keeps Postgres current while the rollback window is"
                        + " open), never a reason to repair DynamoDB from Postgres: --repair is refused.");
            }
            List<Slot> ordered = v.slots();
            Set<String> copying = v.copying();
            if (!copying.isEmpty()) {
                err.println("warning: " + copying.size() + " of these slots are not finished copying (the copy is still"
                        + " running); items it has not written yet show as MISSING until it has");
            }
            if (retryRefused) {
                // with --json and slots to verify, stdout holds their one JSON document: the retry's summary goes to
                // stderr
                boolean alone = ordered.isEmpty();
                int left = printRetried(v.retryRefused(), v.throughTail(), json && !alone ? err : out, json && alone);
                if (alone) return left == 0 ? MATCH : MISMATCH;
            }
            Map<String, RefusedRows.Refusal> known = v.knownRefusals();
            if (!json) {
                out.printf(
                        "verifying %d slot%s of %s against DynamoDB %s (%d at a time)%s%n",
                        ordered.size(),
                        ordered.size() == 1 ? "" : "s",
                        v.table().name(),
                        config.target().table(),
                        threads,
                        repair ? ", repairing differences" + (v.throughTail() ? " through the running tail" : "") : "");
                out.printf(
                        "%-12s %-9s %10s %10s %11s %7s%n",
                        "slot", "verdict", "postgres", "dynamodb", "differences", "ms");
            }
            List<String> empty = Collections.synchronizedList(new ArrayList<>());
            List<SlotResult> results = v.verify(repair, r -> {
                if (json) return;
                if (emptyMatch(r, copying)) empty.add(r.slot()); // grouped into runs once all are known
                else print(r, out, copying.contains(r.slot()), known);
            });
            if (!json) printEmpty(empty, out);
            return summarize(results, copying, known, out);
        }
    }

    private List<Slot> parseSlots() {
        List<Slot> out = new ArrayList<>();
        for (String s : slots) {
            try {
                String[] ends = s.split("\\.\\.", -1);
                if (ends.length == 1) {
                    out.add(Slot.parse(s));
                } else if (ends.length == 2) {
                    Slot a = Slot.parse(ends[0]);
                    Slot b = Slot.parse(ends[1]);
                    SlotRange range = a.isOlderThan(b) ? new SlotRange(b, a) : new SlotRange(a, b);
                    range.forEach(out::add);
                } else {
                    throw new IllegalArgumentException("'" + s + "' has more than one '..'");
                }
            } catch (IllegalArgumentException e) {
                throw new RebalanceException(
                        ErrorCode.CONFIG_INVALID,
                        "--slot " + s + " is not valid: " + e.getMessage()
                                + "; write a slot like 20241020.02 or a range like 20241020.00..20241020.23");
            }
        }
        return out;
    }

    /** Says what the retry of the refused rows did. @return how many are still refused */
    private static int printRetried(VerifyRun.Retried r, boolean throughTail, PrintWriter out, boolean asJson)
            throws Exception {
        List<RefusedRows.Refusal> left = r.stillRefused();
        if (asJson) {
            Map<String, Object> doc = new LinkedHashMap<>();
            doc.put("retried", r.retried());
            doc.put("stillRefused", left);
            out.println(JSON.writeValueAsString(doc));
        } else {
            out.printf(
                    "retried %d refused row%s%s: %d written, %d still refused%n",
                    r.retried(),
                    r.retried() == 1 ? "" : "s",
                    throughTail ? " through the running tail" : "",
                    r.retried() - left.size(),
                    left.size());
            for (RefusedRows.Refusal x : left) {
                out.printf(
                        "  id %s  slot %s  %s%s%n",
                        x.id(), x.slot(), x.column().isEmpty() ? "" : "column " + x.column() + ": ", x.reason());
            }
        }
        out.flush();
        return left.size();
    }

    private static void print(SlotResult r, PrintWriter out, boolean copying, Map<String, RefusedRows.Refusal> known) {
        synchronized (out) {
            if (r.verdict() == SlotResult.Verdict.ERROR) {
                out.printf("%-12s %-9s %s%n", r.slot(), "ERROR", r.error());
                return;
            }
            out.printf(
                    "%-12s %-9s %,10d %,10d %,11d %,7d%s%n",
                    r.slot(),
                    r.verdict(),
                    r.sourceRows(),
                    r.targetItems(),
                    r.differences().size(),
                    r.tookMillis(),
                    notes(r, copying));
            int shown = 0;
            for (Difference d : r.differences()) {
                if (shown++ == 20) {
                    out.printf(
                            "  ... and %d more (--json lists them all)%n",
                            r.differences().size() - 20);
                    break;
                }
                RefusedRows.Refusal refusal = known.get(d.id());
                out.println("  " + d.describe()
                        + (refusal == null
                                ? ""
                                : "  [known: refused, "
                                        + (refusal.column().isEmpty() ? "" : "column " + refusal.column() + ": ")
                                        + refusal.reason() + "]"));
            }
        }
    }

    /** A slot without rows or items that matches: printed with the others like it, as runs of hours. */
    private static boolean emptyMatch(SlotResult r, Set<String> copying) {
        return r.verdict() == SlotResult.Verdict.MATCH
                && r.sourceRows() == 0
                && r.targetItems() == 0
                && r.repaired().isEmpty()
                && r.resolvedOnRecheck() == 0
                && !copying.contains(r.slot());
    }

    /** Empty matching hours as runs, oldest first: {@code 20090101.00..20090104.07 MATCH 0 0 0 0 (80 empty hours)}. */
    private static void printEmpty(List<String> names, PrintWriter out) {
        List<Slot> slots = names.stream().map(Slot::parse).sorted().toList();
        int i = 0;
        while (i < slots.size()) {
            int j = i;
            while (j + 1 < slots.size()
                    && !slots.get(j).noTime()
                    && slots.get(j).newer().equals(slots.get(j + 1))) j++;
            String name = i == j
                    ? slots.get(i).name()
                    : slots.get(i).name() + ".." + slots.get(j).name();
            out.printf(
                    "%-12s %-9s %,10d %,10d %,11d %,7d%s%n",
                    name,
                    SlotResult.Verdict.MATCH,
                    0,
                    0,
                    0,
                    0,
                    i == j ? "" : "  (" + String.format("%,d", j - i + 1) + " empty hours)");
            i = j + 1;
        }
    }

    private static String notes(SlotResult r, boolean copying) {
        List<String> notes = new ArrayList<>();
        if (copying) notes.add("copy not finished");
        if (!r.repaired().isEmpty()) notes.add("repaired " + r.repaired().size());
        if (r.resolvedOnRecheck() > 0) notes.add(r.resolvedOnRecheck() + " in flight, gone on re-check");
        return notes.isEmpty() ? "" : "  (" + String.join("; ", notes) + ")";
    }

    private int summarize(
            List<SlotResult> results, Set<String> copying, Map<String, RefusedRows.Refusal> known, PrintWriter out)
            throws Exception {
        Map<SlotResult.Verdict, Long> counts = new LinkedHashMap<>();
        for (SlotResult.Verdict v : SlotResult.Verdict.values()) counts.put(v, 0L);
        long differences = 0;
        long repaired = 0;
        List<RefusedRows.Refusal> refusedSeen = new ArrayList<>();
        for (SlotResult r : results) {
            counts.merge(r.verdict(), 1L, Long::sum);
            differences += r.differences().size();
            repaired += r.repaired().size();
            for (Difference d : r.differences()) {
                if (known.containsKey(d.id())) refusedSeen.add(known.get(d.id()));
            }
        }
        long inNoSlot = unslotted == null ? 0 : unslotted.total();
        int code = counts.get(SlotResult.Verdict.ERROR) > 0
                ? ERROR
                : counts.get(SlotResult.Verdict.MISMATCH) > 0 || inNoSlot > 0 ? MISMATCH : MATCH;
        if (json) {
            Map<String, Object> doc = new LinkedHashMap<>();
            doc.put("result", code == MATCH ? "MATCH" : code == MISMATCH ? "MISMATCH" : "ERROR");
            doc.put("counts", counts);
            doc.put("differences", differences);
            doc.put("repaired", repaired);
            doc.put("notFinishedCopying", new TreeSet<>(copying));
            doc.put("refused", refusedSeen);
            doc.put("storeOfRecord", storeOfRecord.store().wire());
            if (unslotted != null) doc.put("rowsInNoSlot", inNoSlot);
            doc.put("slots", results);
            out.println(JSON.writeValueAsString(doc));
        } else {
            out.printf(
                    "%d slots: %d MATCH, %d MISMATCH, %d ERROR; %d differences%s%n",
                    results.size(),
                    counts.get(SlotResult.Verdict.MATCH),
                    counts.get(SlotResult.Verdict.MISMATCH),
                    counts.get(SlotResult.Verdict.ERROR),
                    differences,
                    repaired > 0 ? ", " + repaired + " repaired" : "");
            if (inNoSlot > 0) {
                out.println("and " + unslotted.describe() + ": in no slot, so neither copied nor verified; the cutover"
                        + " refuses while any exist");
            }
            if (!refusedSeen.isEmpty()) {
                out.printf(
                        "%d of the differences are known refused rows (DynamoDB cannot hold them as mapped): fix the"
                                + " rows or the settings, then `rebalance verify --retry-refused`%n",
                        refusedSeen.size());
            }
            if (code == MISMATCH && !repair && refusedSeen.size() < differences && storeOfRecord.postgres())
                out.println("to re-copy exactly these ids: rebalance verify --repair with the same slots");
        }
        out.flush();
        return code;
    }
}
