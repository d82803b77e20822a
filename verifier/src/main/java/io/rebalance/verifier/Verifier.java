package io.rebalance.verifier;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.copy.ItemWriter;
import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.refused.RefusedRows;
import io.rebalance.core.retry.Retrier;
import io.rebalance.core.slot.KeyRanges;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.source.PartRows;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * {@code rebalance verify} as a library: verifies slots in parallel (each thread with its own Postgres session and
 * the pinned settings the canonical expressions need) and, when asked, repairs what differs and verifies again.
 */
public final class Verifier {
    private static final Logger log = LoggerFactory.getLogger(Verifier.class);
    static final int FANOUT = 16;
    static final int LEAF_ROWS = 64;
    /** How long a re-check waits for a standby to replay the primary's position, besides verify.settle. */
    static final Duration STANDBY_CATCHUP = Duration.ofSeconds(30);

    private final MigrationConfig config;
    private final SourceTable table;
    private final SlotVerifier slots;
    private final Repairs repairs;
    private final SourceFingerprints source;
    private final SlotItems items;
    private final KeyVerifier keys;
    private final SparseSurvey sparse;
    private final SourceSession primary;
    /** Where fingerprints are read: the source, or a hot standby of it ({@link VerifyOptions#standby}). */
    private final SourceSession reads;

    private final VerifyOptions options;

    /** A verifier with the defaults: every row, read from the source, repairs written here. */
    public Verifier(MigrationConfig config, SourceTable table, DynamoDbClient dynamo, InFlight inFlight) {
        this(config, table, dynamo, VerifyOptions.of(inFlight));
    }

    public Verifier(MigrationConfig config, SourceTable table, DynamoDbClient dynamo, VerifyOptions options) {
        this(config, table, dynamo, options, SlotVerifier.BeforeRecheck.NONE);
    }

    Verifier(
            MigrationConfig config,
            SourceTable table,
            DynamoDbClient dynamo,
            VerifyOptions options,
            SlotVerifier.BeforeRecheck hook) {
        this.config = config;
        this.table = table;
        this.options = options;
        this.primary = new SourceSession(config.source());
        this.reads = options.standby() == null ? primary : new SourceSession(options.standby());
        var target = config.target();
        CanonicalItem canonical =
                new CanonicalItem(table.columns(), table.key(), target.slotAttribute(), target.forms());
        // one row hash on both sides, the cheapest the source computes as Java does (docs/fingerprint.md)
        RowHash hash = RowHash.probe(primary);
        this.source = new SourceFingerprints(table, new CanonicalSql(target.forms()), hash);
        this.items = new SlotItems(
                dynamo, target.table(), SlotIndex.of(target), table.key(), canonical, hash, Retrier.standard());
        source.only(options.rows());
        items.only(options.rows());
        // a slot verified while it is written settles by rows: splitting would descend into every part as it grows
        int leafRows = options.settleByRows() ? Integer.MAX_VALUE : LEAF_ROWS;
        SlotVerifier verifier = new SlotVerifier(
                source, items, canonical, new Pinpointer(source, FANOUT, leafRows), options.inFlight(), hook);
        if (options.standby() != null) {
            Duration catchup = options.standbyCatchup() != null
                    ? options.standbyCatchup()
                    : config.verify().settle().plus(STANDBY_CATCHUP);
            verifier = verifier.withCatchup(new StandbyCatchup(primary, catchup)::await);
        }
        this.slots = verifier;
        this.keys = new KeyVerifier(source, items, canonical, slots, table.keyspace());
        this.sparse = new SparseSurvey(source, items, this::open);
        // repair re-copies exactly the differing ids from Postgres as it is now: a row is put, a missing row deleted
        ItemWriter repairer = ItemWriter.of(table, target, dynamo, Retrier.standard());
        RefusedRows refused = options.refused();
        this.repairs = options.repairs() != null
                ? options.repairs()
                : refused != null ? (c, ids) -> repairer.refresh(c, ids, refused, "repair") : repairer::refresh;
    }

    /** The row hash of a canonical text, as this verify computes it on both sides (for a client hashing rows). */
    public long rowHash(String canonical) {
        return source.hashOf(canonical);
    }

    /** The rows compared ({@link VerifyOptions#rows}). */
    public PartRows rows() {
        return options.rows();
    }

    /** Writes {@code ids} again from Postgres as it is now, as a repair would. @return items put or deleted */
    public int repair(Connection source, List<String> ids) throws Exception {
        return repairs.repair(source, ids);
    }

    /**
     * Verifies {@code slots} with {@code parallel} threads, newest first, and hands each result to {@code onResult}
     * as it is known (from several threads at once). With {@code repair}, a slot that does not match is repaired and
     * verified again; the result is that second verification, carrying what was repaired.
     */
    public List<SlotResult> verify(List<Slot> slots, int parallel, boolean repair, Consumer<SlotResult> onResult)
            throws InterruptedException {
        List<SlotResult> results = Collections.synchronizedList(new ArrayList<>());
        Consumer<SlotResult> collect = r -> {
            results.add(r);
            onResult.accept(r);
        };
        List<Slot> left = slots;
        try {
            Optional<SparseSurvey.Outcome> surveyed =
                    options.surveySparse() ? sparse.survey(slots, parallel) : Optional.empty();
            if (surveyed.isPresent()) {
                surveyed.get().matched().forEach(collect);
                left = surveyed.get().left();
            }
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) { // every slot is then verified alone, which reports what fails there
            log.warn("surveying {} slots at once failed ({}); verifying them one by one", slots.size(), e.toString());
        }
        perSlot(left, parallel, repair, collect);
        results.sort((a, b) -> b.slot().compareTo(a.slot()));
        return results;
    }

    private void perSlot(List<Slot> slots, int parallel, boolean repair, Consumer<SlotResult> collect)
            throws InterruptedException {
        if (slots.isEmpty()) return;
        List<List<Slot>> spans;
        try {
            spans = spans(slots, parallel);
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) { // each slot is then verified alone, which reports what fails there
            log.warn("the table's rows could not be estimated ({}); fingerprinting hours one by one", e.toString());
            spans = slots.stream().map(List::of).toList();
        }
        ConcurrentLinkedQueue<List<Slot>> queue = new ConcurrentLinkedQueue<>(spans);
        int threadCount = Math.min(parallel, Math.max(1, queue.size()));
        ExecutorService threads = Executors.newFixedThreadPool(threadCount);
        try {
            List<Future<?>> running = new ArrayList<>();
            for (int t = 0; t < threadCount; t++) {
                running.add(threads.submit(() -> {
                    drain(queue, repair, collect);
                    return null;
                }));
            }
            for (Future<?> f : running) {
                try {
                    f.get();
                } catch (ExecutionException e) {
                    throw new IllegalStateException("a verify thread failed: " + e.getCause(), e.getCause());
                }
            }
        } finally {
            threads.shutdownNow();
        }
    }

    /**
     * {@code slots} cut into spans of adjacent hours whose Postgres fingerprints are taken in one query each ({@link
     * HourSpans}); one slot a span when there are no more slots than threads (nothing to gain, one query fewer).
     */
    public List<List<Slot>> spans(List<Slot> slots, int parallel) throws Exception {
        if (slots.size() <= parallel) return slots.stream().map(List::of).toList();
        try (Connection c = open()) {
            return HourSpans.split(slots, parallel, source.rowEstimate(c, 2 * HourSpans.SPAN_ROWS));
        }
    }

    private void drain(ConcurrentLinkedQueue<List<Slot>> queue, boolean repair, Consumer<SlotResult> onResult)
            throws InterruptedException {
        Connection c = null;
        try {
            for (List<Slot> span = queue.poll(); span != null; span = queue.poll()) {
                Map<Slot, SlotVerifier.Spanned> spanned = Map.of();
                if (span.size() > 1) {
                    try {
                        if (c == null || !c.isValid(2)) c = open();
                        spanned = spanned(c, span);
                    } catch (InterruptedException e) {
                        throw e;
                    } catch (Exception e) { // its halves are tried instead, down to single hours
                        log.warn(
                                "hours {}..{} could not be fingerprinted at once ({}); trying each half",
                                span.get(0),
                                span.get(span.size() - 1),
                                e.toString());
                        closeQuietly(c);
                        c = null;
                        queue.addAll(HourSpans.halves(span));
                        continue;
                    }
                }
                for (Slot slot : span) {
                    try {
                        if (c == null || !c.isValid(2)) c = open();
                        onResult.accept(verifyOne(c, slot, repair, spanned.get(slot)));
                    } catch (InterruptedException e) {
                        throw e;
                    } catch (Exception e) {
                        log.warn("slot {} could not be verified: {}", slot, e.toString());
                        onResult.accept(SlotResult.error(slot.name(), System.currentTimeMillis(), e.toString()));
                        closeQuietly(c);
                        c = null;
                    }
                }
            }
        } finally {
            closeQuietly(c);
        }
    }

    /** Every hour of {@code span} fingerprinted by one query, with the WAL position noted before it. */
    private Map<Slot, SlotVerifier.Spanned> spanned(Connection c, List<Slot> span) throws Exception {
        long at = System.currentTimeMillis();
        String lsn = SourceFingerprints.walLsn(c); // before the read: a change committed before it is in it
        Map<Slot, Fingerprint> hours =
                source.hours(c, HourSpans.oldest(span), HourSpans.newest(span), HourSpans.TIMEOUT_SECONDS);
        long share = (System.currentTimeMillis() - at) / span.size(); // each slot's part of the one query
        Map<Slot, SlotVerifier.Spanned> out = new HashMap<>();
        for (Slot slot : span) {
            out.put(slot, new SlotVerifier.Spanned(hours.getOrDefault(slot, Fingerprint.EMPTY), lsn, at, share));
        }
        return out;
    }

    private SlotResult verifyOne(Connection c, Slot slot, boolean repair, SlotVerifier.Spanned spanned)
            throws Exception {
        SlotResult first = spanned == null ? slots.verify(c, slot) : slots.verify(c, slot, spanned);
        if (!repair || first.verdict() != SlotResult.Verdict.MISMATCH) return first;
        List<String> differing =
                first.differences().stream().map(Difference::id).toList();
        int repaired;
        if (reads == primary) repaired = repairs.repair(c, differing);
        else { // a standby may lag: a repair writes the rows as the source holds them
            try (Connection p = primary.open()) {
                repaired = repairs.repair(p, differing);
            }
        }
        log.info("slot {}: repaired {} ids; verifying again", slot, repaired);
        SlotResult second = slots.verify(c, slot);
        return new SlotResult(
                second.slot(),
                second.verdict(),
                second.sourceRows(),
                second.targetItems(),
                second.sourceFingerprint(),
                second.targetFingerprint(),
                second.differences(),
                second.resolvedOnRecheck(),
                second.walLsn(),
                second.atMillis(),
                first.tookMillis() + second.tookMillis(),
                null,
                first.differences());
    }

    /**
     * Compares these ids row by row, whichever slots they are in, with {@code parallel} DynamoDB readers. Only while
     * neither store takes writes: nothing is re-checked (the cutover's blocked window).
     *
     * @param c a session from {@link #open()}
     * @return what differs, by id
     */
    public List<Difference> compareKeys(Connection c, Collection<String> ids, int parallel) throws Exception {
        PartRows rows = options.rows();
        List<String> compared = rows.all() ? List.copyOf(ids) : rows.only(List.copyOf(ids));
        return keys.compare(c, compared, parallel, new HashMap<>());
    }

    /**
     * Compares keys as {@link #compareKeys} does, for a DynamoDB that takes no writes: each key's item is read once,
     * and comparing it again reads only its row (a rollback waiting for Postgres to catch up); on key ranges its item
     * too, whose slot attribute the reverse stream may still set.
     */
    public FrozenTarget frozenTarget() {
        return new FrozenTarget(keys, table.keyspace() instanceof KeyRanges);
    }

    /** A Postgres session with the pinned settings the canonical expressions need, for {@link #postgresSide}. */
    public Connection open() throws Exception {
        return reads.open();
    }

    private static void closeQuietly(Connection c) {
        if (c == null) return;
        try {
            c.close();
        } catch (Exception ignored) {
            // the session is being dropped after a failure
        }
    }

    public SourceTable table() {
        return table;
    }

    /** The Postgres half alone: one slot's fingerprint, computed by the server (for benchmarks and tools). */
    public Fingerprint postgresSide(Connection session, Slot slot) throws Exception {
        return source.slot(session, slot);
    }

    /** The Postgres half alone: the fingerprints of a span of {@link #spans}, one query for all its hours. */
    public Map<Slot, Fingerprint> postgresSide(Connection session, List<Slot> span) throws Exception {
        return source.hours(session, HourSpans.oldest(span), HourSpans.newest(span));
    }

    /** The DynamoDB half alone: one slot's items read through the slot index and hashed. */
    public Fingerprint dynamoSide(Slot slot) throws InterruptedException {
        return items.read(slot).fingerprint();
    }
}
