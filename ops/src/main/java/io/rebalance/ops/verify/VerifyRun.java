package io.rebalance.ops.verify;

import io.rebalance.cdc.RepairQueue;
import io.rebalance.cdc.TailProgress;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.copy.RunPlan;
import io.rebalance.core.refused.RefusedRows;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.source.PartRows;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.core.source.UnslottedRows;
import io.rebalance.mover.RunPlanner;
import io.rebalance.ops.Connections;
import io.rebalance.ops.InFlightWait;
import io.rebalance.ops.PartChoice;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.keyspace.TailKeys;
import io.rebalance.protocol.route.StoreOfRecord;
import io.rebalance.verifier.SlotResult;
import io.rebalance.verifier.VerificationStore;
import io.rebalance.verifier.Verifier;
import io.rebalance.verifier.VerifyOptions;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * One {@code rebalance verify}, decided once before anything is compared: which slots (those named, and with
 * {@code all} every slot that holds rows or items), whether the table and the run agree with what is stored, which
 * store holds the truth, and how repairs are sent (through a running tail, which owns the writes of changed rows,
 * or directly). The command only parses, calls and prints.
 */
public final class VerifyRun implements AutoCloseable {
    private final Connections c;
    private final MigrationConfig config;
    private final SourceTable table;
    private final List<Slot> slots;
    private final UnslottedRows unslotted;
    private final StoreOfRecord storeOfRecord;
    private final Set<String> copying;
    private final VerificationStore store;
    private final RefusedRows refused;
    private final Verifier verifier;
    private final boolean throughTail;
    /** False for one part's rows ({@code --part}): a saved verdict covers every part Postgres keeps. */
    private final boolean saves;

    private final int threads;

    private VerifyRun(
            Connections c,
            MigrationConfig config,
            SourceTable table,
            List<Slot> slots,
            UnslottedRows unslotted,
            StoreOfRecord storeOfRecord,
            boolean writes,
            int threads,
            PartRows rows,
            boolean saves) {
        this.c = c;
        this.saves = saves;
        this.config = config;
        this.table = table;
        this.slots = slots;
        this.unslotted = unslotted;
        this.storeOfRecord = storeOfRecord;
        this.threads = threads;
        this.copying = VerifyScope.stillCopying(c, slots);
        this.store = c.verifications();
        this.refused = c.refusedRows();
        VerifyOptions options = VerifyOptions.of(InFlightWait.of(config, c))
                .surveyingSparse()
                .only(rows); // a part whose window closed is DynamoDB's alone
        if (!config.verify().jdbcUrl().isEmpty())
            options = options.readingFrom(config.verify().reads(config.source()));
        TailKeys tailKeys = config.redis().keyspace().tail();
        this.throughTail = writes
                && !config.mover().coordinatedByPostgres() // no tail runs beside a copy coordinated by Postgres
                && new TailProgress(c.redis(), tailKeys).applied().isPresent();
        this.verifier = new Verifier(
                config,
                table,
                c.dynamo(),
                throughTail
                        ? options.repairingThrough(VerifyScope.throughTail(new RepairQueue(c.redis(), tailKeys)))
                        : options.recordingRefusals(refused));
    }

    /**
     * Opens the stores and decides what to verify and how.
     *
     * @param named the slots named on the command line
     * @param all also every slot that holds rows or items (and count the rows in no slot)
     * @param threads slots verified at once
     * @param repair whether differences are repaired
     * @param retryRefused whether the refused rows are written again
     * @throws io.rebalance.protocol.RebalanceException when another run owns the prefix, the table's schema changed
     *     since the copy, the target table does not match, or rows would be written over DynamoDB as store of record
     */
    public static VerifyRun open(
            MigrationConfig config, List<Slot> named, boolean all, int threads, boolean repair, boolean retryRefused)
            throws Exception {
        return open(config, named, all, threads, repair, retryRefused, null);
    }

    /**
     * As {@link #open(MigrationConfig, List, boolean, int, boolean, boolean)}, over one part's rows when {@code part}
     * names one ({@code verify --part}): its results are reported, not saved, since a saved verdict covers the rows
     * of every part Postgres keeps, which the cutover's pre-check reads.
     *
     * @throws RebalanceException PART_UNKNOWN for a part the table does not have; CONFIG_INVALID for a part whose
     *     window closed (Postgres keeps its rows no more)
     */
    public static VerifyRun open(
            MigrationConfig config,
            List<Slot> named,
            boolean all,
            int threads,
            boolean repair,
            boolean retryRefused,
            String part)
            throws Exception {
        Connections c = new Connections(config, threads + 2);
        try {
            List<Slot> chosen = new ArrayList<>(named);
            SourceTable table;
            UnslottedRows unslotted = null;
            try (Connection pg = new SourceSession(config.source()).openForPreflight()) {
                table = SourceTable.inspect(pg, config).keepRanges(pg); // a repair writes items with their range
                VerifyScope.requireUtf8(pg);
                VerifyScope.requireStandby(config, pg);
                new RunPlanner(config).refuseAnotherRun(c.runState(), table, c.dynamo());
                // items of two shapes would read as differences everywhere, with no word of why
                RunPlan planned = c.runState().plan();
                if (planned != null) {
                    Optional<String> changed = planned.schemaChange(table.schema());
                    if (changed.isPresent()) throw RunPlanner.schemaChanged(table.name(), changed.get());
                }
                List<Slot> ofRun = all || !named.isEmpty() ? VerifyScope.allSlots(config, c, pg, table) : List.of();
                VerifyScope.requireSlotsOfRun(named, ofRun);
                if (all) {
                    chosen.addAll(ofRun);
                    unslotted = VerifyScope.unslotted(config, c, pg, table);
                }
            }
            c.checkTarget(table);
            StoreOfRecord storeOfRecord = c.storeOfRecord();
            if (!storeOfRecord.postgres() && (repair || retryRefused)) {
                storeOfRecord.requirePostgres(
                        repair ? "verify --repair" : "verify --retry-refused",
                        "`rebalance verify` without it still compares the two stores. To make Postgres equal"
                                + " DynamoDB, roll back (`rebalance cutover --rollback`): the reverse stream carries"
                                + " DynamoDB's writes to Postgres and the rollback proves it before reopening"
                                + " Postgres.");
            }
            List<Slot> newestFirst = new ArrayList<>(new TreeSet<>(chosen).descendingSet());
            PartRows kept = c.keptRows(table);
            PartRows rows = kept;
            if (part != null) {
                rows = PartChoice.of(config, part, false, c::routeStatus).rows(table);
                if (!kept.all() && !kept.names().contains(part)) {
                    throw new RebalanceException(
                            ErrorCode.CONFIG_INVALID,
                            "--part " + part + ": its window is closed, so DynamoDB alone holds its rows and Postgres"
                                    + " keeps them no more; there is nothing to compare. Verify the other parts.");
                }
            }
            return new VerifyRun(
                    c,
                    config,
                    table,
                    newestFirst,
                    unslotted,
                    storeOfRecord,
                    repair || retryRefused,
                    threads,
                    rows,
                    part == null);
        } catch (Exception | Error e) {
            c.close();
            throw e;
        }
    }

    public SourceTable table() {
        return table;
    }

    /** The slots to verify, newest first, each once. */
    public List<Slot> slots() {
        return slots;
    }

    /** With {@code all}: the rows no slot holds (outside slots.from/slots.to), which no slot's verdict covers. */
    public Optional<UnslottedRows> unslotted() {
        return Optional.ofNullable(unslotted);
    }

    /** Where each slot's latest result is kept. */
    public VerificationStore results() {
        return store;
    }

    /** Which store holds the truth, read once: Postgres until a cutover opens DynamoDB to applications. */
    public StoreOfRecord storeOfRecord() {
        return storeOfRecord;
    }

    /** The slots among {@link #slots} the copy has not finished. */
    public Set<String> copying() {
        return copying;
    }

    /** Whether repairs go through the running tail (which owns the writes of the rows it carries). */
    public boolean throughTail() {
        return throughTail;
    }

    public int threads() {
        return threads;
    }

    /** The rows DynamoDB refused, by id: a difference among them is a known one. */
    public Map<String, RefusedRows.Refusal> knownRefusals() {
        Map<String, RefusedRows.Refusal> known = new HashMap<>();
        for (RefusedRows.Refusal r : refused.all()) known.put(r.id(), r);
        return known;
    }

    /** What {@link #retryRefused} did: how many rows it wrote again, and those DynamoDB still cannot hold. */
    public record Retried(int retried, List<RefusedRows.Refusal> stillRefused) {}

    /** Writes the refused rows again from Postgres as it is now; rows DynamoDB still cannot hold stay listed. */
    public Retried retryRefused() throws Exception {
        List<String> ids = refused.all().stream().map(RefusedRows.Refusal::id).toList();
        if (!ids.isEmpty()) {
            try (Connection pg = new SourceSession(config.source()).open()) {
                verifier.repair(pg, ids);
            }
        }
        List<RefusedRows.Refusal> still = refused.all();
        // the run's events listed each refusal; without this line they read as still standing after the retry
        if (!ids.isEmpty())
            c.runState()
                    .event("retried-refused rows=" + ids.size() + " written=" + (ids.size() - still.size())
                            + " still-refused=" + still.size());
        return new Retried(ids.size(), still);
    }

    /** Verifies {@link #slots}, {@link #threads} at a time; each result is saved, then handed to {@code each}. */
    public List<SlotResult> verify(boolean repair, Consumer<SlotResult> each) throws Exception {
        return verifier.verify(slots, threads, repair, r -> {
            if (saves) store.save(r);
            each.accept(r);
        });
    }

    @Override
    public void close() {
        c.close();
    }
}
