package io.rebalance.ops.cutover;

import io.rebalance.cdc.ChangedSlots;
import io.rebalance.cdc.TailStatus;
import io.rebalance.cdc.reverse.ReverseWritesPreflight;
import io.rebalance.core.config.Durations;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.copy.RunPlan;
import io.rebalance.core.copy.RunStatus;
import io.rebalance.core.refused.RefusedRows;
import io.rebalance.core.slot.KeyRanges;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.core.source.UnslottedRows;
import io.rebalance.cutover.CutoverParts;
import io.rebalance.cutover.PreCheck;
import io.rebalance.cutover.PreChecks;
import io.rebalance.ops.Connections;
import io.rebalance.ops.RedisChecks;
import io.rebalance.protocol.handoff.Lsn;
import io.rebalance.protocol.keyspace.TailKeys;
import io.rebalance.protocol.shadow.ShadowLog;
import io.rebalance.protocol.shadow.ShadowOutcome;
import io.rebalance.verifier.SlotResult;
import io.rebalance.verifier.VerificationStore;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The cutover's pre-checks, in the order they run, each with a reason a person can act on: the copy is FINISHED; the
 * source table still has the columns the run was planned with; no copy process runs and no slot lease is held; the
 * tail runs and keeps up; every slot of the run has a recent MATCH; no row is listed as refused; the reverse stream
 * runs (so the cutover can be rolled back); every row is in a slot; the reverse stream can write rows back; the fence
 * trigger guards the table and its partitions; no application role can change the Postgres fence; Redis keeps what
 * the cutover writes to it, persisted and not evicted ({@link RedisChecks}); and, with {@code cutover.shadowWindow}
 * set, the applications' shadow reads compared enough reads and none differed.
 */
public final class CutoverChecks implements PreChecks {
    private final MigrationConfig config;
    private final Connections c;
    private final CutoverParts parts;
    private final boolean allowRedisWithoutAof;

    private final SourceTable table;

    /** @param table the source table as the catalog has it now */
    public CutoverChecks(
            MigrationConfig config,
            Connections c,
            CutoverParts parts,
            SourceTable table,
            boolean allowRedisWithoutAof) {
        this.config = config;
        this.c = c;
        this.table = table;
        this.parts = parts;
        this.allowRedisWithoutAof = allowRedisWithoutAof;
    }

    @Override
    public List<PreCheck> run() {
        List<PreCheck> out = new ArrayList<>();
        RunStatus status = c.runState().status();
        RunPlan plan = c.runState().plan();
        out.add(
                status == RunStatus.FINISHED
                        ? PreCheck.pass("copy", "FINISHED")
                        : PreCheck.fail(
                                "copy",
                                "the copy is " + status + ", not FINISHED; run `rebalance copy` until `rebalance"
                                        + " status` says FINISHED"));
        out.add(schema(plan));
        out.add(copyProcesses());
        out.add(tail());
        out.add(verified(plan));
        out.add(refused());
        out.add(parts.reverse()
                .notReady()
                .map(why -> PreCheck.fail("reverse stream", why + " (without it the cutover could not be undone)"))
                .orElseGet(() -> PreCheck.pass("reverse stream", "running")));
        try (Connection pg = new SourceSession(config.source()).openForPreflight()) {
            out.add(everyRowInASlot(pg));
            out.add(reverseWrites(pg));
        } catch (SQLException e) {
            out.add(PreCheck.fail("source", "Postgres failed during the pre-checks: " + e.getMessage()));
        }
        out.add(parts.fenceTrigger());
        out.add(parts.fenceGrants());
        out.addAll(RedisChecks.run(c.redis(), config.redis(), parts.settings().scope(), allowRedisWithoutAof));
        if (!config.cutover().shadowWindow().isZero()) out.add(shadowReads());
        return out;
    }

    /** The applications' shadow reads of the window compared enough reads, and none differed (off at 0s). */
    private PreCheck shadowReads() {
        String scope = parts.settings().scope();
        Duration window = config.cutover().shadowWindow();
        Map<ShadowOutcome, Long> n = new ShadowLog(c.redis(), config.redis().keyspace()).counts(scope, window);
        long mismatched = n.get(ShadowOutcome.MISMATCH);
        long compared = n.get(ShadowOutcome.MATCH) + mismatched;
        String seen = compared + " reads compared in the last "
                + Durations.format(config.cutover().shadowWindow()) + " (" + n.get(ShadowOutcome.ERROR) + " errors, "
                + n.get(ShadowOutcome.SKIPPED) + " skipped)";
        if (mismatched > 0) {
            return PreCheck.fail(
                    "shadow reads",
                    mismatched + " of the " + seen + " were mismatches: applications would read something else from"
                            + " DynamoDB; `rebalance shadow` lists them with both answers");
        }
        int least = config.cutover().shadowMinReads();
        if (compared < least) {
            return PreCheck.fail(
                    "shadow reads",
                    seen + ", fewer than cutover.shadowMinReads " + least + "; raise the sample (`rebalance shadow"
                            + " --sample`) or wait");
        }
        return PreCheck.pass("shadow reads", seen + ", every one a match");
    }

    /** The items hold the columns the run was planned with; a table that changed since makes them another shape. */
    private PreCheck schema(RunPlan plan) {
        if (plan == null) return PreCheck.pass("source schema", "no run to compare with (see verification)");
        return plan.schemaChange(table.schema())
                .map(change -> PreCheck.fail(
                        "source schema",
                        "source table " + table.name() + " changed since the run was planned: " + change + "; run"
                                + " `rebalance copy --accept-schema`, then `rebalance verify --all --repair`"
                                + " (docs/schema-changes.md)"))
                .orElseGet(() -> PreCheck.pass("source schema", "the columns the run was planned with"));
    }

    /** When the run was planned: later rows are the tail's to carry. Now, before any copy. */
    private Instant plannedAt() {
        RunPlan plan = c.runState().plan();
        return plan == null ? Instant.now() : Instant.ofEpochMilli(plan.createdMs());
    }

    /** The reverse stream can write the table back: a rollback is proven possible before the flip. */
    private PreCheck reverseWrites(Connection pg) {
        try {
            List<String> problems = ReverseWritesPreflight.problems(pg, table);
            return problems.isEmpty()
                    ? PreCheck.pass("reverse writes", "the reverse stream can write rows back")
                    : PreCheck.fail("reverse writes", String.join("; and ", problems));
        } catch (SQLException e) {
            return PreCheck.fail("reverse writes", "could not plan the reverse stream's writes: " + e.getMessage());
        }
    }

    /** Every row is in a slot: a row no slot holds was neither copied nor verified, and would vanish at the flip. */
    private PreCheck everyRowInASlot(Connection pg) {
        if (table.keyspace() instanceof KeyRanges) {
            return PreCheck.pass(
                    "rows in no slot",
                    "none: the key ranges of " + table.name() + " hold every key (the first and the last are"
                            + " open-ended)");
        }
        try {
            // the slots the tail changed are verified whole before the window (PRE_VERIFY): their rows are proven
            UnslottedRows rows = UnslottedRows.count(
                    pg,
                    table,
                    config,
                    new ChangedSlots(c.redis(), config.redis().keyspace().tail(), table.keyspace())
                            .positions()
                            .slots(),
                    plannedAt());
            return rows.total() == 0
                    ? PreCheck.pass("rows in no slot", "none: every row of " + table.name() + " is in a slot")
                    : PreCheck.fail(
                            "rows in no slot",
                            rows.describe() + "; neither copied nor verified, they would be missing from DynamoDB"
                                    + " after the flip");
        } catch (SQLException e) {
            return PreCheck.fail("rows in no slot", "could not count them: " + e.getMessage());
        }
    }

    private PreCheck tail() {
        TailKeys keys = config.redis().keyspace().tail();
        TailStatus.Report s = TailStatus.read(c.redis(), keys);
        if (!s.running(System.currentTimeMillis())) {
            return PreCheck.fail("tail", "no tail is running; start `rebalance tail` (the cutover waits for it)");
        }
        long lag = s.lagMs();
        Duration max = config.cutover().maxTailLag();
        return lag <= max.toMillis()
                ? PreCheck.pass("tail", "lag " + lag + " ms")
                : PreCheck.fail(
                        "tail",
                        "lag " + lag + " ms is over cutover.maxTailLag "
                                + Durations.format(config.cutover().maxTailLag())
                                + "; wait until `rebalance status` shows the tail caught up");
    }

    /**
     * No copy process runs and no slot lease lives: a worker writes DynamoDB without the cutover's fences, and once
     * its lease has lapsed every write it made under it was sent, and landed or was abandoned, before its holder's
     * deadline (ADR 6), so a lapsed lease needs no other wait.
     */
    private PreCheck copyProcesses() {
        Map<String, String> live =
                c.runState().liveProcesses(config.mover().leaseTtl().toMillis());
        if (!live.isEmpty()) {
            return PreCheck.fail(
                    "copy processes",
                    live.size() + " copy process" + (live.size() == 1 ? " runs" : "es run") + " ("
                            + String.join(", ", live.keySet()) + "); a copy writes DynamoDB past the cutover's"
                            + " fences: wait until `rebalance status` says FINISHED and they exit, or stop them");
        }
        List<String> leases = c.runState().heldSlotLeases();
        if (!leases.isEmpty()) {
            return PreCheck.fail(
                    "copy processes",
                    leases.size() + " slot lease" + (leases.size() == 1 ? " is" : "s are") + " still held ("
                            + leases.get(0) + (leases.size() > 1 ? ", ..." : "") + "): a copy worker that died may"
                            + " still have a write in flight until it lapses, within mover.leaseTtl "
                            + Durations.format(config.mover().leaseTtl()) + "; run again after that");
        }
        return PreCheck.pass("copy processes", "none runs, no slot lease is held");
    }

    private PreCheck refused() {
        long n = new RefusedRows(c.redis(), config.redis().keyspace()).count();
        return n == 0
                ? PreCheck.pass("refused rows", "none")
                : PreCheck.fail(
                        "refused rows",
                        n + " row" + (n == 1 ? " is" : "s are") + " listed as refused: DynamoDB does not hold them"
                                + " (`rebalance status` lists them); fix the rows or the settings, then `rebalance"
                                + " verify --retry-refused`");
    }

    private PreCheck verified(RunPlan plan) {
        if (plan == null) return PreCheck.fail("verification", "no run: nothing was copied under this prefix");
        Map<String, VerificationStore.Stored> all =
                new VerificationStore(c.redis(), config.redis().keyspace()).all();
        long truncated = truncatedAt();
        long oldest =
                System.currentTimeMillis() - config.cutover().verifyMaxAge().toMillis();
        List<String> missing = new ArrayList<>();
        long slots = 0;
        for (Slot slot : plan.range()) {
            slots++;
            VerificationStore.Stored s = all.get(slot.name());
            if (s == null) missing.add(slot.name() + " never verified");
            else if (s.verdict() != SlotResult.Verdict.MATCH) missing.add(slot.name() + " " + s.verdict());
            else if (s.atMillis() < oldest) missing.add(slot.name() + " verified too long ago");
            else if (truncated > 0 && lsn(s.walLsn()) < truncated)
                missing.add(slot.name() + " verified before the TRUNCATE at " + Lsn.text(truncated));
        }
        if (missing.isEmpty()) {
            return PreCheck.pass(
                    "verification",
                    slots + " slots MATCH within "
                            + Durations.format(config.cutover().verifyMaxAge()));
        }
        return PreCheck.fail(
                "verification",
                missing.size() + " of " + slots + " slots lack a recent MATCH ("
                        + String.join(", ", missing.subList(0, Math.min(5, missing.size())))
                        + (missing.size() > 5 ? ", ..." : "")
                        + "); run `rebalance verify --all`"
                        + (truncated > 0
                                ? " (after a TRUNCATE, with --repair: the tail does not delete the items)"
                                : ""));
    }

    /** The WAL position of the last TRUNCATE the tail saw, or 0: it changed every slot. */
    private long truncatedAt() {
        return new ChangedSlots(c.redis(), config.redis().keyspace().tail(), null)
                .positions()
                .truncated()
                .orElse(0L);
    }

    private static long lsn(String text) {
        return text == null || text.isEmpty() ? 0 : Lsn.parse(text);
    }
}
