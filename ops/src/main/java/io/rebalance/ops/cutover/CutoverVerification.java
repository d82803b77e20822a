package io.rebalance.ops.cutover;

import io.rebalance.cdc.ChangedSlots;
import io.rebalance.cdc.TailProgress;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.copy.RunPlan;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.source.PartRows;
import io.rebalance.core.source.SourceTable;
import io.rebalance.cutover.WindowVerification;
import io.rebalance.ops.Connections;
import io.rebalance.ops.InFlightWait;
import io.rebalance.ops.PartChoice;
import io.rebalance.protocol.handoff.KeyLog;
import io.rebalance.protocol.handoff.Lsn;
import io.rebalance.verifier.Difference;
import io.rebalance.verifier.SlotResult;
import io.rebalance.verifier.VerificationStore;
import io.rebalance.verifier.Verifier;
import io.rebalance.verifier.VerifyOptions;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What the cutover verifies, and when (ADR 7). Before the blocked window, while writes go on: start the tail's key
 * log ({@link KeyLog}), verify the slots changed since their last verification ({@link ChangedSlots}; the verifier
 * re-checks what was in flight), then compare the logged keys in rounds, each on a fresh generation, until few are
 * left. In the window, with Postgres closed and the tail holding: compare the keys of the last generation, row by
 * row. So the window costs what was written in the last round, not what the table holds.
 *
 * <p>Why nothing is missed: a key the tail wrote before the log started is in a slot whose last change the
 * changed-slot record shows once the tail applied a position taken after the start, so its slot is verified after
 * that; a key it wrote after is in a generation, and every generation is compared, the last one in the window. A key
 * that differs in a round (perhaps a change in flight) goes into the next generation, and so to the window at last.
 * The rounds stop once a generation is small, or no smaller than nine tenths of the one before (the writes outpace
 * them), and each waits for the tail to apply the generation's switch, so the window's own wait for the tail is short.
 *
 * <p>{@code --verify-all} keeps the old way: every slot, inside the window (a baseline, and for small tables).
 */
public final class CutoverVerification implements WindowVerification {
    /** The rounds before the window stop once a generation has no more keys than this. */
    public static final int WINDOW_KEYS = 300;

    public static final int MAX_ROUNDS = 6;
    /** The longest a round waits for a tail that keeps moving to catch up with it. */
    public static final Duration CATCH_UP_LIMIT = Duration.ofMinutes(5);
    /** The log outlives a cutover that died by this much at most; renewed every third of it while one runs. */
    public static final Duration LOG_TTL = Duration.ofMinutes(2);
    /** Differences named in a failed result; the rest are counted. */
    private static final int NAMED = 10;

    private final MigrationConfig config;
    private final Connections c;
    private final SourceTable table;
    private final boolean everySlot;
    private final PartRows part;
    private final KeyLog log;
    private final TailProgress tail;
    private final Set<String> generations = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean lapsed = new AtomicBoolean();
    private ScheduledExecutorService renewer;
    private Verifier verifier;
    private Connection pg;
    private String gen;

    /** @param everySlot verify every slot inside the window ({@code --verify-all}), nothing before it */
    public CutoverVerification(MigrationConfig config, Connections c, SourceTable table, boolean everySlot) {
        this(config, c, table, everySlot, PartChoice.of(config, null, false, s -> Optional.empty()));
    }

    /**
     * @param choice the part cut over: its key log is compared, and only its rows go to the window; the slots are
     *     verified over every part Postgres keeps ({@link Connections#keptRows}), as {@code verify} does
     */
    public CutoverVerification(
            MigrationConfig config, Connections c, SourceTable table, boolean everySlot, PartChoice choice) {
        this.config = config;
        this.c = c;
        this.table = table;
        this.everySlot = everySlot;
        this.part = choice.rows(table);
        var handoff = config.redis().keyspace().handoff();
        this.log = new KeyLog(c.redis(), choice.part() == null ? handoff : handoff.part(choice.part()));
        this.tail = new TailProgress(c.redis(), config.redis().keyspace().tail());
    }

    /** The slots to verify: changed after their last verification, or never verified (every slot with everySlot). */
    public List<Slot> changed() {
        RunPlan plan = c.runState().plan();
        if (plan == null) return List.of();
        Map<String, VerificationStore.Stored> all = store().all();
        ChangedSlots.Positions changed = new ChangedSlots(
                        c.redis(), config.redis().keyspace().tail(), table.keyspace())
                .positions(); // one round trip for every slot
        Set<Slot> candidates = new TreeSet<>();
        plan.range().forEach(candidates::add);
        for (String name : changed.bySlot().keySet()) {
            if (!name.equals(ChangedSlots.ALL) && !name.equals(ChangedSlots.TRUNCATED))
                candidates.add(Slot.parse(name)); // also slots newer than the plan
        }
        List<Slot> out = new ArrayList<>();
        for (Slot slot : candidates) {
            VerificationStore.Stored s = all.get(slot.name());
            long verifiedAt = s == null || s.walLsn() == null || s.walLsn().isEmpty() ? 0 : Lsn.parse(s.walLsn());
            if (everySlot || verifiedAt == 0 || changed.lastChange(slot.name()).orElse(0L) > verifiedAt) out.add(slot);
        }
        return out;
    }

    /** Whether the slots are verified in the window ({@code --verify-all}) rather than before it. */
    public boolean slotsInWindow() {
        return everySlot;
    }

    @Override
    public Result before() throws Exception {
        if (everySlot) {
            // made before the window: it asks the source which row hash to use, a round trip the window spares
            verifier = new Verifier(
                    config, table, c.dynamo(), VerifyOptions.of(lsn -> {}).only(c.keptRows(table)));
            return new Result(true, "--verify-all: every slot is verified in the window");
        }
        verifier = new Verifier(
                config,
                table,
                c.dynamo(),
                VerifyOptions.of(InFlightWait.of(config, c)).settlingByRows().only(c.keptRows(table)));
        pg = verifier.open(); // kept for the window, where opening one would count
        gen = start();
        renewer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "cutover-keylog");
            t.setDaemon(true);
            return t;
        });
        long third = LOG_TTL.toMillis() / 3;
        renewer.scheduleWithFixedDelay(
                () -> {
                    try {
                        if (!log.renew(LOG_TTL, generations)) lapsed.set(true);
                    } catch (RuntimeException e) {
                        // Redis away for a moment: the next renewal retries, and the window checks the log is alive
                    }
                },
                third,
                third,
                TimeUnit.MILLISECONDS);
        // every change the tail wrote before the log started shows in the changed-slot record once it applied this
        long started = walNow();
        TailProgress.CatchUp first = tail.awaitCatchUp(started, tailBound(), CATCH_UP_LIMIT);
        if (!first.reached()) return behind(new Round(0, started, first));
        long slotsStart = System.nanoTime();
        List<Slot> slots = changed();
        List<SlotResult> results = slots.isEmpty()
                ? List.of()
                : verifier.verify(slots, config.verify().parallel(), false, r -> {
                    // only a MATCH is kept: under writes a re-checked row can be in flight again, so a MISMATCH here
                    // is not a verdict, and saving it would fail the next cutover's pre-check
                    if (r.verdict() == SlotResult.Verdict.MATCH) store().save(r);
                });
        List<String> errors = results.stream()
                .filter(r -> r.verdict() == SlotResult.Verdict.ERROR)
                .map(r -> r.slot() + ": " + r.error())
                .toList();
        if (!errors.isEmpty()) return new Result(false, "slots could not be verified: " + String.join("; ", errors));
        // what differs goes to the rounds and then the window, which compare it again: a change in flight settles
        // there, a real difference aborts the cutover in the window
        List<String> differing = part.only(results.stream()
                .flatMap(r -> r.differences().stream())
                .map(Difference::id)
                .toList()); // another part's rows are not this window's: its own cutover compares them
        log.add(gen, differing);
        long roundsStart = System.nanoTime();
        int rounds = 0;
        long compared = 0;
        int previous = Integer.MAX_VALUE;
        while (rounds < MAX_ROUNDS) {
            rounds++;
            Round r = round();
            if (!r.tail().reached()) return behind(r);
            compared += r.keys();
            if (r.keys() <= WINDOW_KEYS) break;
            // Not shrinking: the writes outpace the rounds, and another round would leave the window as many keys
            // to compare as this one did; it would only add the time of a round to the cutover.
            if (r.keys() * 10L > previous * 9L) break;
            previous = r.keys();
        }
        return new Result(
                true,
                slots.size() + " changed slots in " + ms(slotsStart, roundsStart) + " ms (" + differing.size()
                        + " rows in flight compared again), " + compared + " keys the tail wrote meanwhile in "
                        + rounds + " rounds, " + ms(roundsStart, System.nanoTime()) + " ms");
    }

    private static long ms(long fromNanos, long toNanos) {
        return TimeUnit.NANOSECONDS.toMillis(toNanos - fromNanos);
    }

    /**
     * One round while writes go on: a fresh generation, the tail caught up with the switch, then the old generation's
     * keys compared. Waiting for the tail to apply the switch (not only to log under the new generation) is what keeps
     * the window short: the window waits for the tail to reach its own position, so a tail that fell behind while the
     * slots were verified catches up here, while writes go on, and a tail that cannot keep up stops the cutover before
     * it blocks a write.
     */
    private Round round() throws Exception {
        String old = gen;
        gen = start();
        long switched = walNow();
        // applied past the switch: every apply that logged under the old generation has finished writing (KeyLog)
        TailProgress.CatchUp caught = tail.awaitCatchUp(switched, tailBound(), CATCH_UP_LIMIT);
        if (!caught.reached()) return new Round(0, switched, caught);
        Set<String> keys = log.keys(old);
        List<Difference> differ = verifier.compareKeys(pg, keys, config.verify().parallel());
        // writes go on, so a difference may be a change in flight: the window compares it again, with nothing moving
        log.add(gen, differ.stream().map(Difference::id).toList());
        log.drop(old);
        generations.remove(old);
        return new Round(keys.size(), switched, caught);
    }

    /** @param keys the keys compared; @param switched the WAL position at the switch; @param tail the wait for it */
    private record Round(int keys, long switched, TailProgress.CatchUp tail) {}

    private Result behind(Round r) {
        long applied = r.tail().applied();
        return new Result(
                false,
                "the tail did not reach WAL position " + Lsn.text(r.switched()) + " before the window ("
                        + r.tail().why()
                        + (applied > 0
                                ? "; applied up to " + Lsn.text(applied) + ", "
                                        + Math.max(0, r.switched() - applied) / 1024 + " KiB of WAL short"
                                : "")
                        + "). Writes were not blocked; run the cutover again once `rebalance status` shows the tail"
                        + " keeping up");
    }

    @Override
    public Result verify(Duration budget) throws Exception {
        if (everySlot) return verifySlots(budget);
        if (lapsed.get() || !gen.equals(log.current().orElse(null))) {
            return new Result(
                    false,
                    "the key log of this cutover lapsed (Redis lost it, or it was not renewed for "
                            + LOG_TTL.toSeconds()
                            + " s), so the keys written since the slots were verified are unknown");
        }
        Set<String> keys = log.keys(gen);
        List<Difference> differ = within(
                budget, () -> verifier.compareKeys(pg, keys, config.verify().parallel()));
        if (differ == null) return new Result(false, keys.size() + " keys did not compare within the budget");
        if (differ.isEmpty()) return new Result(true, keys.size() + " keys written since the last round are equal");
        List<String> named =
                differ.stream().limit(NAMED).map(d -> d.id() + " " + d.kind()).toList();
        return new Result(
                false,
                differ.size() + " of " + keys.size() + " keys differ: " + String.join(", ", named)
                        + (differ.size() > NAMED ? ", ..." : "") + "; `rebalance verify --all` narrows them down");
    }

    /** {@code --verify-all}: every slot, in the window. Nothing is in flight then: Postgres is closed. */
    private Result verifySlots(Duration budget) throws Exception {
        List<Slot> slots = changed();
        if (slots.isEmpty()) return new Result(true, "no slot to verify");
        // the verifier before() made waits for nothing before a re-check: nothing is in flight in the window
        List<SlotResult> results =
                within(budget, () -> verifier.verify(slots, config.verify().parallel(), false, this::save));
        if (results == null) return new Result(false, slots.size() + " slots did not verify within the budget");
        List<String> bad = results.stream()
                .filter(r -> r.verdict() == SlotResult.Verdict.ERROR
                        || (r.verdict() != SlotResult.Verdict.MATCH
                                && (r.differences().isEmpty()
                                        || !part.only(r.differences().stream()
                                                        .map(Difference::id)
                                                        .toList())
                                                .isEmpty())))
                .map(r -> r.slot() + " " + r.verdict() + " (" + r.differences().size() + " differences)")
                .toList();
        return bad.isEmpty()
                ? new Result(true, slots.size() + " slots MATCH")
                : new Result(false, String.join(", ", bad) + "; `rebalance status` lists them");
    }

    /** @return the work's result, or null when it did not finish within {@code budget} (it is then cancelled) */
    private static <T> T within(Duration budget, Callable<T> work) throws Exception {
        ExecutorService runner = Executors.newSingleThreadExecutor();
        try {
            Future<T> f = runner.submit(work);
            try {
                return f.get(budget.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                f.cancel(true);
                return null;
            } catch (ExecutionException e) {
                throw e.getCause() instanceof Exception x ? x : e;
            }
        } finally {
            runner.shutdownNow();
        }
    }

    /**
     * Saves a slot's result. An ERROR (the budget's interruption among them) keeps the slot's last result: it says
     * nothing about the data, and saving it would fail the next cutover's pre-check.
     */
    private void save(SlotResult r) {
        if (r.verdict() != SlotResult.Verdict.ERROR) store().save(r);
    }

    @Override
    public void close() throws Exception {
        if (renewer != null) renewer.shutdownNow();
        for (String g : generations) log.stop(g);
        generations.clear();
        if (pg != null) pg.close();
    }

    private String start() {
        String g = log.start(LOG_TTL);
        generations.add(g);
        return g;
    }

    private VerificationStore store() {
        return new VerificationStore(c.redis(), config.redis().keyspace());
    }

    /** How long the tail may take to answer: a heartbeat brings the position on an idle table. */
    private Duration tailBound() {
        return config.tail().heartbeat().multipliedBy(2).plus(Duration.ofSeconds(5));
    }

    /**
     * A WAL position now, as a logical message: the tail gets an event to pass at once, so an idle table does not
     * wait for the next heartbeat.
     */
    private long walNow() throws Exception {
        return walNow(pg, "rebalance.keylog");
    }

    /** A WAL position now, as a logical message with the prefix {@code mark}, which the tail passes at once. */
    static long walNow(Connection pg, String mark) throws SQLException {
        try (PreparedStatement ps = pg.prepareStatement("SELECT pg_logical_emit_message(false, ?, '')::text")) {
            ps.setString(1, mark);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return Lsn.parse(rs.getString(1));
            }
        }
    }
}
