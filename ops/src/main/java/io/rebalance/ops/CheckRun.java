package io.rebalance.ops;

import io.rebalance.cdc.TailPreflight;
import io.rebalance.cdc.reverse.ReverseWritesPreflight;
import io.rebalance.core.Finding;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.slot.KeyRanges;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.slot.SlotRange;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.core.source.TableSurvey;
import io.rebalance.core.source.TableSurvey.Refused;
import io.rebalance.core.source.TableSurvey.SlotSurvey;
import io.rebalance.core.source.TableSurvey.Totals;
import io.rebalance.mover.RunPlanner;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.fence.FenceTrigger;
import io.rebalance.protocol.fence.PostgresFence;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * One {@code rebalance check}: every slot of the run's range surveyed in Postgres by parallel sessions, without
 * moving a row, and the findings (refused rows, what the tail and the reverse stream need of Postgres). It reads
 * Postgres only; the command prints what it returns.
 */
public final class CheckRun {
    private CheckRun() {}

    /**
     * What the check found.
     *
     * @param slots every slot of {@code range}, in its order
     */
    public record Result(
            SourceTable table, SlotRange range, List<SlotSurvey> slots, Totals totals, List<Finding> findings) {
        /** Something would block the migration; every finding names its way out. */
        public boolean blocking() {
            return findings.stream().anyMatch(f -> f.level() == Finding.Level.BLOCKING);
        }
    }

    /**
     * @param sessions Postgres sessions surveying slots at once
     * @param progress told how far the survey is, every 5 seconds while it runs
     * @throws RebalanceException SOURCE_UNREACHABLE when Postgres fails during the check
     */
    public static Result run(MigrationConfig asGiven, int sessions, Consumer<String> progress) throws Exception {
        try (Connection c = new SourceSession(asGiven.source()).openForPreflight()) {
            Slotted slotted = Slotted.of(c, asGiven);
            MigrationConfig config = slotted.config();
            SourceTable table = slotted.table();
            RunPlanner planner = new RunPlanner(config);
            SlotRange range = slotted.range();
            List<String> implausible = planner.rangeWarnings(c, table);
            TableSurvey survey = new TableSurvey(table, config.target());
            List<SlotSurvey> slots = surveyAll(config, survey, range, sessions, progress);
            Totals totals = Totals.of(slots);
            List<Finding> findings = new ArrayList<>();
            if (slotted.instead() != null) findings.add(slotted.instead());
            implausible.forEach(w -> findings.add(Finding.warning("time range", w)));
            if (table.keyspace() instanceof KeyRanges ranges) findings.add(keyRanges(ranges, slots));
            else findings.add(SlotRangeIndex.finding(c, table));
            for (Refused r : totals.refused()) findings.add(refusedFinding(r, slots));
            if (config.mover().coordinatedByPostgres()) {
                // what a tail and a cutover need of Postgres does not block a run that can have neither
                findings.add(Finding.ok("tail", CopyOnly.WAY_ON));
            } else {
                findings.addAll(TailPreflight.findings(c, table, config));
                List<String> reverse = ReverseWritesPreflight.problems(c, table);
                if (reverse.isEmpty())
                    findings.add(
                            Finding.ok("reverse writes", "the reverse stream can write rows back: a rollback can run"));
                reverse.forEach(why -> findings.add(Finding.blocking("reverse writes", why)));
                findings.add(fenceTrigger(c, config));
            }
            return new Result(table, range, slots, totals, findings);
        } catch (SQLException e) {
            throw new RebalanceException(
                    ErrorCode.SOURCE_UNREACHABLE, "Postgres failed during the check: " + e.getMessage(), e);
        }
    }

    /**
     * The table and its run's slots as configured; where the configured time cannot be read from the key (random
     * uuids, text that is no ULID, integers read as ULIDs), the key ranges {@code slots.timeFrom: none} would plan,
     * surveyed in their place, and the refusal as a blocking finding that names them: a check recommends, where a
     * copy refuses.
     */
    private record Slotted(MigrationConfig config, SourceTable table, SlotRange range, Finding instead) {
        static Slotted of(Connection c, MigrationConfig config) throws SQLException {
            try {
                SourceTable table = SourceTable.inspect(c, config);
                return new Slotted(config, table, new RunPlanner(config).range(c, table), null);
            } catch (RebalanceException refused) {
                if (refused.code() != ErrorCode.SOURCE_KEY_TYPE
                        || config.slots().fromColumn()
                        || config.slots().keyRanges()) throw refused;
                MigrationConfig ranged = config.withSlots(config.slots().asKeyRanges());
                SourceTable table;
                try {
                    table = SourceTable.inspect(c, ranged);
                } catch (RebalanceException alsoRefused) {
                    throw refused; // the key itself is refused, not its time
                }
                return new Slotted(
                        ranged,
                        table,
                        new RunPlanner(ranged).range(c, table),
                        Finding.blocking(
                                "slots",
                                refused.getMessage() + ". The slots surveyed here are the key ranges slots.timeFrom:"
                                        + " none plans"));
            }
        }
    }

    /** How the planned key ranges came out: each should hold about {@code slots.rowsPerSlot} rows. */
    private static Finding keyRanges(KeyRanges ranges, List<SlotSurvey> slots) {
        long min = slots.stream().mapToLong(SlotSurvey::rows).min().orElse(0);
        long max = slots.stream().mapToLong(SlotSurvey::rows).max().orElse(0);
        return Finding.ok(
                "key ranges",
                String.format(
                        Locale.ROOT,
                        "%,d range%s of the primary key (%s .. %s), planned for %,d rows each, hold %,d to %,d rows;"
                                + " the first and the last are open-ended, so every key has one",
                        ranges.count(),
                        ranges.count() == 1 ? "" : "s",
                        Slot.range(0),
                        Slot.range(ranges.count() - 1),
                        ranges.rowsPerSlot(),
                        min,
                        max));
    }

    /**
     * Whether {@code cutover --prepare} can install the trigger that makes Postgres refuse writes bypassing the guard
     * once the route leaves SOURCE, or has (docs/cutover.md, "Writes that bypass the fence").
     */
    private static Finding fenceTrigger(Connection c, MigrationConfig config) throws SQLException {
        PostgresFence fence = new PostgresFence(config.cutover().pgFence());
        FenceTrigger trigger = fence.trigger();
        String table = config.source().table();
        String scope = config.cutover().scope();
        if (fence.find(c, scope).isPresent() && trigger.enforced(c, table, scope)) {
            return Finding.ok(
                    "fence trigger",
                    trigger.name() + " is in place on " + table + ": Postgres refuses every write there while its"
                            + " fence is closed");
        }
        List<String> missing = trigger.missingPrivileges(c, table); // every flip enables or disables it
        if (!missing.isEmpty()) {
            return Finding.blocking(
                    "fence trigger",
                    String.join("; ", missing) + ": `cutover --prepare` refuses without it, since Postgres would take"
                            + " writes that bypass WriteGuard after the flip, and lose them");
        }
        return Finding.ok(
                "fence trigger",
                "`cutover --prepare` can install " + trigger.name() + " on " + table + " and the cutover enable it, so"
                        + " Postgres refuses every write that bypasses WriteGuard once the route leaves SOURCE");
    }

    /** Every slot of the range, in its order, surveyed by {@code sessions} workers with a Postgres session each. */
    private static List<SlotSurvey> surveyAll(
            MigrationConfig config, TableSurvey survey, SlotRange range, int sessions, Consumer<String> progress)
            throws Exception {
        List<Slot> all = new ArrayList<>();
        range.forEach(all::add);
        SlotSurvey[] out = new SlotSurvey[all.size()];
        AtomicInteger next = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        int workers = Math.min(sessions, Math.max(1, all.size()));
        ExecutorService pool = Executors.newFixedThreadPool(workers, r -> {
            Thread t = new Thread(r, "check-survey");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<?>> running = new ArrayList<>();
            for (int w = 0; w < workers; w++) {
                running.add(pool.submit(() -> {
                    try (Connection c = new SourceSession(config.source()).open()) {
                        TableSurvey.tune(c);
                        for (int i = next.getAndIncrement(); i < all.size(); i = next.getAndIncrement()) {
                            out[i] = survey.slot(c, all.get(i));
                            done.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : running) {
                while (true) {
                    try {
                        f.get(5, TimeUnit.SECONDS);
                        break;
                    } catch (TimeoutException e) {
                        progress.accept(
                                String.format("checked %,d of %,d slots", done.get(), all.size())); // as printf did
                    } catch (ExecutionException e) {
                        if (e.getCause() instanceof SQLException sql) throw sql;
                        throw e;
                    }
                }
            }
        } finally {
            pool.shutdownNow();
        }
        return List.of(out);
    }

    private static Finding refusedFinding(Refused r, List<SlotSurvey> slots) {
        long inSlots = slots.stream()
                .filter(s -> s.refused().stream()
                        .anyMatch(x -> x.refusal() == r.refusal() && Objects.equals(x.column(), r.column())))
                .count();
        String where = r.column() == null ? "" : " in column " + r.column();
        String after = "; the copy writes every other row and exits 21 listing these";
        return Finding.blocking(
                "refused rows",
                String.format(
                        Locale.ROOT,
                        "%,d rows%s hold %s%s (ids %s .. %s%s); way out: %s (docs/codec.md)",
                        r.rows(),
                        where,
                        r.refusal().what(),
                        after,
                        r.firstId(),
                        r.lastId(),
                        inSlots > 0 ? ", in " + inSlots + " slots" : "",
                        r.refusal().wayOut(r.column())));
    }
}
