package io.rebalance.verifier;

import io.rebalance.core.codec.RowCodec;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.copy.KeyRefresher;
import io.rebalance.core.dynamo.BatchWriter;
import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.dynamo.WritePacer;
import io.rebalance.core.refused.RefusedRows;
import io.rebalance.core.retry.Retrier;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.source.PageReader;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
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
    static final java.time.Duration STANDBY_CATCHUP = java.time.Duration.ofSeconds(30);
    /** Fewer slots than this are verified one by one without a survey: their queries cost less than a scan. */
    static final int SURVEY_MIN_HOURS = 100;
    /** A survey's hours travel as one array of bounds; spans beyond this (114 years) are verified one by one. */
    static final long SURVEY_MAX_HOURS = 1_000_000;
    /** A table with fewer rows per hour of the span than this on average is surveyed first. */
    static final long SPARSE_ROWS_PER_HOUR = 10;

    private final MigrationConfig config;
    private final SourceTable table;
    private volatile SlotVerifier slots;
    private final KeyRefresher repairer;
    private volatile Repairs repairs;
    private final SourceFingerprints source;
    private final SlotItems items;
    private final KeyVerifier keys;
    private final SourceSession primary;
    /** Where fingerprints are read: the source, or a hot standby of it ({@link #readFrom}). */
    private volatile SourceSession reads;
    /** Whether a long span of a sparse table is surveyed first ({@link #surveySparse}). */
    private volatile boolean survey;

    public Verifier(MigrationConfig config, SourceTable table, DynamoDbClient dynamo, InFlight inFlight) {
        this(config, table, dynamo, inFlight, SlotVerifier.BeforeRecheck.NONE);
    }

    Verifier(
            MigrationConfig config,
            SourceTable table,
            DynamoDbClient dynamo,
            InFlight inFlight,
            SlotVerifier.BeforeRecheck hook) {
        this.config = config;
        this.table = table;
        this.primary = new SourceSession(config.source());
        this.reads = primary;
        var target = config.target();
        CanonicalItem canonical =
                new CanonicalItem(table.columns(), table.key(), target.slotAttribute(), target.forms());
        this.source = new SourceFingerprints(table, new CanonicalSql(target.forms()));
        this.items =
                new SlotItems(dynamo, target.table(), SlotIndex.of(target), table.key(), canonical, Retrier.standard());
        this.slots =
                new SlotVerifier(source, items, canonical, new Pinpointer(source, FANOUT, LEAF_ROWS), inFlight, hook);
        this.keys = new KeyVerifier(source, items, canonical, slots, table.keyspace());
        RowCodec codec = table.codec(target);
        // repair re-copies exactly the differing ids from Postgres as it is now: a row is put, a missing row deleted
        this.repairer = new KeyRefresher(
                new PageReader(table),
                codec,
                new BatchWriter(dynamo, target.table(), 25, Retrier.standard(), WritePacer.NONE));
        this.repairs = repairer::refresh;
    }

    /**
     * Fingerprints, pinpointing and re-checks read {@code standby} (a hot standby of the source, {@code
     * verify.jdbcUrl}) instead of the source; a re-check first waits until it has replayed the primary's position,
     * and repairs read the source. Only for {@code rebalance verify}: the cutover compares the stores as they are.
     */
    public Verifier readFrom(MigrationConfig.Source standby) {
        return readFrom(standby, config.verify().settleDuration().plus(STANDBY_CATCHUP));
    }

    /** @param catchupBound how long a re-check waits for the standby to replay the primary's position */
    Verifier readFrom(MigrationConfig.Source standby, java.time.Duration catchupBound) {
        this.reads = new SourceSession(standby);
        this.slots = slots.withCatchup(new StandbyCatchup(primary, catchupBound)::await);
        return this;
    }

    /**
     * A long span of a table sparse over its hours is surveyed before slots are verified alone ({@link #verify}); for
     * {@code rebalance verify}, whose {@code --all} walks every hour of the run. The cutover verifies as before.
     */
    public Verifier surveySparse() {
        this.survey = true;
        return this;
    }

    /**
     * Settles a slot whose fingerprints differ with one query of per-row hashes instead of splitting it: for slots
     * verified while they are written (the cutover, before its window), where rows in flight are spread over every
     * part and the splitting would descend into all of them, while the slot grows.
     */
    public Verifier settleByRows() {
        this.slots = slots.withPinpointer(new Pinpointer(source, FANOUT, Integer.MAX_VALUE));
        return this;
    }

    /**
     * Repairs written here list the rows DynamoDB cannot hold in {@code refused} and write the others, instead of
     * failing the slot on the first such row.
     */
    public Verifier recordRefusals(RefusedRows refused) {
        this.repairs = (c, ids) -> repairer.refresh(c, ids, refused, "repair");
        return this;
    }

    /** Writes {@code ids} again from Postgres as it is now, as a repair would. @return items put or deleted */
    public int repair(Connection source, List<String> ids) throws Exception {
        return repairs.repair(source, ids);
    }

    /** Repairs go through {@code repairs} instead of being written here (through a running tail, say). */
    public Verifier repairThrough(Repairs repairs) {
        this.repairs = repairs;
        return this;
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
            java.util.Optional<Survey> survey = survey(slots, parallel);
            if (survey.isPresent()) {
                survey.get().matched().forEach(collect);
                left = survey.get().left();
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

    /**
     * With {@link #surveySparse}, a table sparse over its hours (fewer than {@value #SPARSE_ROWS_PER_HOUR} rows per
     * hour of the span on average, in Postgres and by DynamoDB's estimate of its items) is surveyed before any slot is
     * verified alone: every hour's fingerprint from Postgres in one query and from
     * DynamoDB in one scan of the table, so the cost follows the rows, not the hours. An hour whose two fingerprints
     * are equal is a MATCH (an empty hour too); the others are verified alone, pinpointed and re-checked as always.
     *
     * @return the hours that match and the slots left to verify alone, or empty when the slots were not surveyed (too
     *     few hours, or not sparse)
     */
    private java.util.Optional<Survey> survey(List<Slot> slots, int parallel) throws Exception {
        if (!survey) return java.util.Optional.empty();
        List<Slot> hours = slots.stream().filter(s -> !s.noTime()).sorted().toList();
        if (hours.size() < SURVEY_MIN_HOURS) return java.util.Optional.empty();
        Slot oldest = hours.get(0);
        Slot newest = hours.get(hours.size() - 1);
        long span = newest.hoursAfter(oldest) + 1;
        if (span > SURVEY_MAX_HOURS) return java.util.Optional.empty();
        try (Connection c = open()) {
            long sparse = span * SPARSE_ROWS_PER_HOUR;
            // both stores: the scan reads every item, and DynamoDB may hold far more than Postgres (after a TRUNCATE)
            if (!source.fewerRowsThan(c, sparse) || items.itemCountEstimate() >= sparse)
                return java.util.Optional.empty();
            long at = System.currentTimeMillis();
            String lsn = SourceFingerprints.walLsn(c); // before the read: a change committed before it is in it
            java.util.Map<Slot, Fingerprint> rows = source.hours(c, oldest, newest);
            java.util.Map<Slot, Fingerprint> found = items.scan(Math.max(1, parallel));
            List<Slot> left = new ArrayList<>();
            List<SlotResult> matched = new ArrayList<>();
            for (Slot slot : slots) {
                Fingerprint pg = rows.getOrDefault(slot, Fingerprint.EMPTY);
                Fingerprint dynamo = found.getOrDefault(slot, Fingerprint.EMPTY);
                if (slot.noTime() || !pg.equals(dynamo)) {
                    left.add(slot);
                    continue;
                }
                matched.add(new SlotResult(
                        slot.name(),
                        SlotResult.Verdict.MATCH,
                        pg.count(),
                        dynamo.count(),
                        pg.toString(),
                        dynamo.toString(),
                        List.of(),
                        0,
                        lsn,
                        at,
                        0,
                        null,
                        List.of()));
            }
            log.info(
                    "surveyed {} hours ({} with rows) in one query and one scan in {} ms; {} to verify alone",
                    span,
                    rows.size(),
                    System.currentTimeMillis() - at,
                    left.size());
            return java.util.Optional.of(new Survey(matched, left));
        }
    }

    /** What a survey settled: hours whose fingerprints are equal, and the slots to verify alone. */
    private record Survey(List<SlotResult> matched, List<Slot> left) {}

    private void perSlot(List<Slot> slots, int parallel, boolean repair, Consumer<SlotResult> collect)
            throws InterruptedException {
        if (slots.isEmpty()) return;
        ConcurrentLinkedQueue<Slot> queue = new ConcurrentLinkedQueue<>(slots);
        ExecutorService threads = Executors.newFixedThreadPool(Math.min(parallel, Math.max(1, slots.size())));
        try {
            List<Future<?>> running = new ArrayList<>();
            for (int t = 0; t < Math.min(parallel, Math.max(1, slots.size())); t++) {
                running.add(threads.submit(() -> {
                    drain(queue, repair, collect);
                    return null;
                }));
            }
            for (Future<?> f : running) {
                try {
                    f.get();
                } catch (java.util.concurrent.ExecutionException e) {
                    throw new IllegalStateException("a verify thread failed: " + e.getCause(), e.getCause());
                }
            }
        } finally {
            threads.shutdownNow();
        }
    }

    private void drain(ConcurrentLinkedQueue<Slot> queue, boolean repair, Consumer<SlotResult> onResult)
            throws InterruptedException {
        Connection c = null;
        try {
            for (Slot slot = queue.poll(); slot != null; slot = queue.poll()) {
                try {
                    if (c == null || !c.isValid(2)) c = open();
                    onResult.accept(verifyOne(c, slot, repair));
                } catch (InterruptedException e) {
                    throw e;
                } catch (Exception e) {
                    log.warn("slot {} could not be verified: {}", slot, e.toString());
                    onResult.accept(SlotResult.error(slot.name(), System.currentTimeMillis(), e.toString()));
                    closeQuietly(c);
                    c = null;
                }
            }
        } finally {
            closeQuietly(c);
        }
    }

    private SlotResult verifyOne(Connection c, Slot slot, boolean repair) throws Exception {
        SlotResult first = slots.verify(c, slot);
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
        return keys.compare(c, ids, parallel, new HashMap<>());
    }

    /**
     * Compares keys as {@link #compareKeys} does, for a DynamoDB that takes no writes: each key's item is read once,
     * and comparing it again reads only its row (a rollback waiting for Postgres to catch up).
     */
    public FrozenTarget frozenTarget() {
        return new FrozenTarget(keys);
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

    /** The DynamoDB half alone: one slot's items read through the slot index and hashed. */
    public Fingerprint dynamoSide(Slot slot) throws InterruptedException {
        return items.read(slot).fingerprint();
    }
}
