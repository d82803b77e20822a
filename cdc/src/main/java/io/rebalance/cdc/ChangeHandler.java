package io.rebalance.cdc;

import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import io.rebalance.core.slot.KeyType;
import io.rebalance.core.slot.TableKey;
import io.rebalance.protocol.fence.PostgresFence;
import io.rebalance.protocol.handoff.BypassedWrites;
import io.rebalance.protocol.handoff.ForwardHold;
import io.rebalance.protocol.handoff.Lsn;
import io.rebalance.protocol.lease.LeaseLost;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.source.SourceRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Takes each batch Debezium delivers, applies the keys it changed through {@link ChangeApplier}, and only once they
 * landed marks the batch processed, so the offsets saved (and the WAL Postgres may drop) never pass a change not yet
 * in DynamoDB. While a backlog drains (full batches, no cutover asking for a hold), one batch's writes land while
 * the next batch is read and sent; every other batch lands before its call returns. A failed apply is retried with
 * backoff for as long as this tail holds its lease: Postgres restarting or DynamoDB being away only delays the stream.
 */
final class ChangeHandler implements DebeziumEngine.ChangeConsumer<ChangeEvent<SourceRecord, SourceRecord>> {
    private static final Logger log = LoggerFactory.getLogger(ChangeHandler.class);

    private final ChangeApplier applier;
    private final String tableTopic;
    private final TableKey key;
    private final TailStats stats;
    private final TailLease lease;
    private final ChangedSlots changed;
    /** Debezium's largest batch: one this large says more changes are queued. */
    private final int fullBatch;
    /** The batch whose writes may still be landing while the next one is read (only while a backlog drains). */
    private Batch landing;
    /** Where changes the held tail passes over that the reverse stream did not make are recorded, per scope. */
    private final List<BypassedWrites> bypassed;
    /**
     * The reverse stream's recent transactions, by the mark that opens each ({@link PostgresFence#REVERSE_MARK}): a
     * transaction's changes may come in a later batch than its mark. Bounded: a tail restarted inside a transaction
     * may miss its mark, and then counts its changes as bypassing, which only makes close-window compare them.
     */
    private final Set<Long> reverseTransactions = Collections.newSetFromMap(new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
            return size() > 4_096;
        }
    });

    ChangeHandler(
            ChangeApplier applier,
            String tableTopic,
            TableKey key,
            TailStats stats,
            TailLease lease,
            ChangedSlots changed,
            List<BypassedWrites> bypassed,
            int fullBatch) {
        this.changed = changed;
        this.bypassed = bypassed;
        this.fullBatch = fullBatch;
        this.applier = applier;
        this.tableTopic = tableTopic;
        this.key = key;
        this.stats = stats;
        this.lease = lease;
    }

    @Override
    public void handleBatch(
            List<ChangeEvent<SourceRecord, SourceRecord>> events,
            DebeziumEngine.RecordCommitter<ChangeEvent<SourceRecord, SourceRecord>> committer)
            throws InterruptedException {
        long start = System.nanoTime();
        for (ChangeEvent<SourceRecord, SourceRecord> e : events) { // the oldest commit's wait before the tail had it
            if (e.value() != null && e.value().sourceOffset().get("ts_usec") instanceof Long ts) {
                stats.stages.record(StageTimes.Stage.DELIVERY, (System.currentTimeMillis() * 1_000 - ts) * 1_000);
                break;
            }
        }
        List<String> keys = new ArrayList<>(events.size());
        List<String> reverseWritten = new ArrayList<>();
        Map<String, Long> bypassing = new HashMap<>();
        int[] truncates = new int[bypassed.size()];
        Map<String, Long> keyLsn = new HashMap<>();
        Set<Long> transactions = new HashSet<>();
        long t = System.nanoTime();
        Holds hold = holdState(); // read once per batch; only this tail acknowledges
        stats.stages.since(StageTimes.Stage.HOLD, t);
        long lsn = 0;
        long first = 0;
        int changes = 0;
        for (ChangeEvent<SourceRecord, SourceRecord> e : events) {
            SourceRecord r = e.value();
            if (r == null) continue;
            // the batch is in commit order: its first commit time is the oldest change waiting (the lag's start)
            if (r.sourceOffset().get("ts_usec") instanceof Long ts) {
                stats.waitingSinceCommitMs.compareAndSet(0, ts / 1000);
                if (first == 0) first = ts / 1000;
            }
            // every event counts for the applied position, heartbeat messages too: the stream is in commit order,
            // so once this batch lands, every change of the table committed before its last event has landed
            if (r.sourceOffset().get("lsn") instanceof Long l) lsn = Math.max(lsn, l);
            if (!tableTopic.equals(r.topic())) {
                Long tx = transaction(r);
                if (tx != null && reverseMark(r)) reverseTransactions.add(tx);
                continue;
            }
            String k = r.key() instanceof Struct struct ? keyText(struct) : null;
            if (r.sourceOffset().get("lsn") instanceof Long at
                    && !(k != null ? hold.applies(k, at) : hold.appliesEverywhere(at))) {
                stats.skippedWhileHeld.incrementAndGet();
                Long tx = transaction(r);
                boolean bypassed = tx == null || !reverseTransactions.contains(tx); // not the reverse stream's
                if (bypassed) stats.bypassedWhileHeld.incrementAndGet();
                // not applied back, but its slot changed, so the next cutover verifies it again
                if (k != null) {
                    reverseWritten.add(k);
                    if (bypassed) bypassing.put(k, at);
                } else if (bypassed && r.value() instanceof Struct v && "t".equals(v.get("op"))) {
                    truncated(r); // names no key: every slot changed, and it is counted as a change not kept
                    for (int i = 0; i < truncates.length; i++) if (!hold.of(i).applies(at)) truncates[i]++;
                }
                continue;
            }
            if (k == null) {
                if (r.value() instanceof Struct v && "t".equals(v.get("op"))) truncated(r);
                continue;
            }
            keys.add(k);
            if (r.sourceOffset().get("lsn") instanceof Long at) keyLsn.put(k, at);
            Long tx = transaction(r);
            if (tx != null) transactions.add(tx);
            changes++;
        }
        Batch batch = new Batch(
                events,
                committer,
                hold,
                keys,
                reverseWritten,
                bypassing,
                truncates,
                transactions,
                keyLsn,
                lsn,
                changes,
                first);
        send(batch);
        if (landing != null) land(landing); // its writes overlapped this batch's reads and writes; reassigned below
        // A full batch says Debezium holds more: its writes land while the next batch is read and sent, which keeps
        // DynamoDB busy through a backlog. Any other batch lands now, and so does one read under a hold, which is
        // answered only with no write in flight (ADR 7).
        landing = hold.quiet() && events.size() >= fullBatch ? batch : null;
        if (landing == null) land(batch);
        if (landing == null) stats.waitingSinceCommitMs.set(0); // nothing delivered waits now
        else if (landing.firstCommitMs > 0) stats.waitingSinceCommitMs.set(landing.firstCommitMs); // it waits to land
        for (int i = 0; i < hold.size(); i++) { // each scope's request is answered on its own
            ForwardHold.State h = hold.of(i);
            boolean reached = h.phase() == ForwardHold.Phase.REQUESTED
                    && stats.appliedLsn() >= h.request().lsn();
            if ((reached || h.unanswered()) && !h.fromFence()) { // the fence's own hold has nobody waiting
                applier.acknowledge(i, h.request(), stats.appliedLsn());
            }
        }
        stats.stages.since(StageTimes.Stage.BATCH, start);
    }

    /** Starts the batch's writes, retried until they are sent (they may still be landing when this returns). */
    private void send(Batch b) throws InterruptedException {
        untilDone(b, () -> b.sent = applier.send(b.hold, b.keys, b.transactions, b.lsnOf()));
    }

    /**
     * Waits until the batch's writes landed (sending it again while they fail), and only then records its slots as
     * changed and marks its events processed, so the offsets saved (and the WAL Postgres may drop) never pass a change
     * not yet in DynamoDB.
     */
    private void land(Batch b) throws InterruptedException {
        untilDone(b, () -> {
            if (b.sent == null) b.sent = applier.send(b.hold, b.keys, b.transactions, b.lsnOf());
            SentBatch sent = b.sent;
            b.sent = null; // a failed landing is sent again: the rows are read anew
            applier.land(sent);
            // before the events are marked processed: a tail that dies here records them again when redelivered
            List<List<String>> byScope = applier.scopes().split(b.bypassing.keySet());
            for (int i = 0; i < bypassed.size(); i++) {
                Map<String, Long> mine = new HashMap<>();
                for (String k : byScope.get(i)) mine.put(k, b.bypassing.get(k));
                bypassed.get(i).record(mine);
                bypassed.get(i).countUnkept(b.truncates[i]);
            }
        });
        long after = System.nanoTime();
        changed.record(b.keys, b.lsn);
        changed.record(b.reverseWritten, b.lsn); // nothing to do when empty; both are rarely non-empty in one batch
        for (ChangeEvent<SourceRecord, SourceRecord> e : b.events) b.committer.markProcessed(e);
        b.committer.markBatchFinished();
        stats.appliedLsn.accumulateAndGet(b.lsn, Math::max);
        if (b.changes > 0) {
            stats.events.addAndGet(b.changes);
            stats.items.addAndGet(b.keys.size());
            stats.lastAppliedMs.set(System.currentTimeMillis());
        }
        stats.stages.since(StageTimes.Stage.AFTER, after);
    }

    /** The transaction of a change or a transactional message; null for a message outside one. */
    private static Long transaction(SourceRecord r) {
        return r.value() instanceof Struct v
                        && v.schema().field("source") != null
                        && v.get("source") instanceof Struct source
                        && source.get("txId") instanceof Long tx
                ? tx
                : null;
    }

    /** Whether the event is the logical message that opens a reverse-stream transaction. */
    private static boolean reverseMark(SourceRecord r) {
        return r.value() instanceof Struct v
                && v.schema().field("message") != null
                && v.get("message") instanceof Struct m
                && PostgresFence.REVERSE_MARK.equals(m.get("prefix"));
    }

    /** The key text of an event's key: its key columns' values. */
    private String keyText(Struct struct) {
        if (!key.composite()) return KeyType.text(struct.get(key.columns().get(0))); // per event: no list
        List<String> parts = new ArrayList<>(key.columns().size());
        for (String column : key.columns()) parts.add(KeyType.text(struct.get(column)));
        return key.text(parts);
    }

    /**
     * A TRUNCATE names no keys, and emptying the target on the stream's word would race the backfill and cannot be
     * undone, so the tail does not apply it: it says so loudly, status keeps saying it (until a reset), and every
     * slot counts as changed at its position, so the cutover refuses until each was verified after it. The way out is
     * {@code verify --all --repair} (which deletes the extra items) or starting over.
     */
    private void truncated(SourceRecord r) {
        long lsn = r.sourceOffset().get("lsn") instanceof Long l ? l : 0;
        stats.truncatedLsn.set(lsn);
        changed.truncated(lsn); // every slot changed: the cutover refuses until each is verified after it
        log.error(
                "the source table was TRUNCATEd (LSN {}); the tail does not empty DynamoDB: run `rebalance verify"
                        + " --all --repair` to delete the items that are gone, or start the migration over",
                Lsn.text(lsn));
    }

    /** The hold this batch obeys, read again until Redis and Postgres answer: nothing is skipped on a guess. */
    private Holds holdState() throws InterruptedException {
        for (int attempt = 0; ; attempt++) {
            try {
                return applier.hold().state();
            } catch (LeaseLost e) {
                throw e;
            } catch (Exception e) {
                lease.check();
                long wait = Math.min(5_000, 100L << Math.min(attempt, 6));
                log.warn(
                        "reading the cutover's hold failed (attempt {}), retrying in {} ms: {}",
                        attempt + 1,
                        wait,
                        e.toString());
                Thread.sleep(wait);
            }
        }
    }

    /**
     * Runs a step of the batch until it succeeds, with backoff, for as long as this tail holds its lease: Postgres
     * restarting or DynamoDB being away only delays the stream. A failure names the batch's last position.
     */
    private void untilDone(Batch b, Step step) throws InterruptedException {
        if (b.lsn != 0) MDC.put("lsn", Lsn.text(b.lsn));
        try {
            for (int attempt = 0; ; attempt++) {
                try {
                    step.run();
                    return;
                } catch (InterruptedException e) {
                    throw e;
                } catch (LeaseLost e) {
                    throw e;
                } catch (Exception e) {
                    lease.check(); // no retry past the lease: a standby may be applying by now
                    stats.applyRetries.incrementAndGet();
                    long wait = Math.min(5_000, 100L << Math.min(attempt, 6));
                    log.warn(
                            "applying {} changed keys failed (attempt {}), retrying in {} ms: {}",
                            b.keys.size(),
                            attempt + 1,
                            wait,
                            e.toString());
                    Thread.sleep(wait); // backoff: the source or DynamoDB is away; the batch is kept until it lands
                }
            }
        } finally {
            MDC.remove("lsn");
        }
    }

    private interface Step {
        void run() throws Exception;
    }

    /** One batch Debezium delivered, what the applier needs of it, and its writes while they are sent. */
    private static final class Batch {
        final List<ChangeEvent<SourceRecord, SourceRecord>> events;
        final DebeziumEngine.RecordCommitter<ChangeEvent<SourceRecord, SourceRecord>> committer;
        final Holds hold;
        final List<String> keys;
        final List<String> reverseWritten;
        /** Keys of changes passed over under the hold that the reverse stream did not make, with their positions. */
        final Map<String, Long> bypassing;
        /** TRUNCATEs among them, per scope held: no key to keep, so only counted. */
        final int[] truncates;

        final Set<Long> transactions;
        final Map<String, Long> keyLsn;
        final long lsn;
        final int changes;
        final long firstCommitMs;
        SentBatch sent;

        Batch(
                List<ChangeEvent<SourceRecord, SourceRecord>> events,
                DebeziumEngine.RecordCommitter<ChangeEvent<SourceRecord, SourceRecord>> committer,
                Holds hold,
                List<String> keys,
                List<String> reverseWritten,
                Map<String, Long> bypassing,
                int[] truncates,
                Set<Long> transactions,
                Map<String, Long> keyLsn,
                long lsn,
                int changes,
                long firstCommitMs) {
            this.events = events;
            this.committer = committer;
            this.hold = hold;
            this.keys = keys;
            this.reverseWritten = reverseWritten;
            this.bypassing = bypassing;
            this.truncates = truncates;
            this.transactions = transactions;
            this.keyLsn = keyLsn;
            this.lsn = lsn;
            this.changes = changes;
            this.firstCommitMs = firstCommitMs;
        }

        /** The WAL position of a key's change, for the refused list. */
        Function<String, String> lsnOf() {
            return k -> {
                Long at = keyLsn.get(k);
                return at == null ? null : Lsn.text(at);
            };
        }
    }
}
