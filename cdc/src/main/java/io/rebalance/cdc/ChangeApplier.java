package io.rebalance.cdc;

import io.rebalance.core.codec.RowRefusedException;
import io.rebalance.core.copy.ItemWriter;
import io.rebalance.core.refused.RefusedRows;
import io.rebalance.core.source.SourceSession;
import io.rebalance.protocol.handoff.ForwardHold;
import io.rebalance.protocol.handoff.KeyLog;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * Applies changed keys to DynamoDB: each key's item becomes its row as Postgres holds it now, or is deleted when the
 * row is gone (ADR 6). Only keys come from the change stream, never values, so no event can carry an older value,
 * a TOAST placeholder or a rounded number into an item; the item is what the backfill's codec makes of the row.
 *
 * <p>One call at a time (the stream's batches and reconciliation share this lock). A call may return with its writes
 * still landing (the stream overlaps one batch's writes with the next batch's reads), but no write of a key is sent
 * while an earlier write of it is in flight, so two writes of one key never race: the later read is the later write.
 * Within a call the keys are distinct and written by several threads.
 */
final class ChangeApplier implements AutoCloseable {
    /** Keys read from Postgres at once; small enough that writing starts soon, large enough to read cheaply. */
    private static final int READ_CHUNK = 500;
    /** A delivered commit not visible by then is not the proc-array window: the batch fails and is retried. */
    private static final Duration VISIBLE_WITHIN = Duration.ofSeconds(30);

    private final SourceSession session;
    private final ItemWriter refresher;
    private final TouchedKeys touched;
    private final TailLease lease;
    private final ExecutorService writers;
    private final Runnable onCommitWait;
    private final TailHold hold;
    private final TailScopes scopes;
    /** One per scope: a part's cutover compares the keys written in its window, and only its part's. */
    private final List<KeyLog> keyLogs;

    private final UnifiedJedis redis;
    private final StageTimes stages;
    private final RefusedRows refusedRows;
    private Connection connection;
    /** Sent, not landed: the stream's while a backlog drains (a batch, or a retried one and the next), a call's. */
    private final List<SentBatch> inFlight = new ArrayList<>();

    ChangeApplier(
            SourceSession session,
            ItemWriter refresher,
            TouchedKeys touched,
            TailLease lease,
            int threads,
            Runnable onCommitWait,
            TailHold hold,
            TailScopes scopes,
            UnifiedJedis redis,
            RefusedRows refusedRows,
            StageTimes stages) {
        this.refusedRows = refusedRows;
        this.stages = stages;
        this.onCommitWait = onCommitWait;
        this.hold = hold;
        this.scopes = scopes;
        this.redis = redis;
        this.keyLogs = scopes.keys().stream().map(k -> new KeyLog(redis, k)).toList();
        this.session = session;
        this.refresher = refresher;
        this.touched = touched;
        this.lease = lease;
        this.writers = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "tail-writer");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Writes keys as Postgres holds them now (reconciliation, repairs), none of a held scope. @return items put or
     * deleted
     */
    synchronized int apply(Collection<String> keys) throws Exception {
        Holds now = hold.state();
        if (now.anyBlocksRewrites()) {
            for (String k : keys) if (now.blocksRewrites(k)) throw held(k, "rewrites");
        }
        return land(send(now, keys, List.of(), key -> null));
    }

    /** The holds as they are now, every scope's: what reconciliation and repairs may write. */
    Holds holds() throws SQLException {
        return hold.state();
    }

    private IllegalStateException held(String key, String what) {
        return new IllegalStateException(
                "the tail is held for a cutover of " + scopes.names().get(scopes.of(key)) + ": it " + what
                        + " nothing of it in DynamoDB until the hold is lifted (ADR 7)");
    }

    /**
     * Starts writing keys the stream delivered as changed by the transactions {@code committed}, under {@code
     * batchHold} (the hold read once for the batch, which its acknowledgement answers too), once a snapshot sees those
     * transactions (CommitVisibility), and returns without waiting for the writes: {@link #land} does. A row DynamoDB
     * cannot hold is not written: it goes on the refused list (with {@code lsnOf} its change's WAL position).
     *
     * <p>Writes sent earlier may still be landing. No write of a key is sent while an earlier one of that key is
     * (the later read is the later write), and the key log's generation is noted as seen only once nothing logged
     * under another is landing (KeyLog#recordUnder): otherwise this waits for them first.
     */
    synchronized SentBatch send(
            Holds batchHold, Collection<String> keys, Collection<Long> committed, Function<String, String> lsnOf)
            throws Exception {
        lease.check(); // also before an empty apply: a tail that lost its lease answers the key log for nothing
        List<String> distinct = new ArrayList<>(new LinkedHashSet<>(keys));
        // the hold as the batch read it: only this tail acknowledges, after the batch, so it cannot have become
        // HELD since; the batch's changes past a requested hold were left out by the caller
        if (batchHold.anyHeld()) {
            for (String k : distinct) if (batchHold.held(k)) throw held(k, "writes");
        }
        long t = System.nanoTime();
        if (inFlight.stream().anyMatch(earlier -> earlier.overlaps(distinct))) awaitInFlight();
        List<Optional<String>> generation = record(distinct); // before the write: a cutover's window compares them
        t = stages.since(StageTimes.Stage.KEY_LOG, t);
        if (distinct.isEmpty()) { // its record told a cutover switching the log's generation that nothing older writes
            return new SentBatch(distinct, generation, List.of(), Set.of(), lsnOf, 0, t);
        }
        touched.beforeWrite(distinct); // recorded before the write, so reconciliation cannot miss it
        t = stages.since(StageTimes.Stage.TOUCHED, t);
        awaitVisible(committed);
        t = stages.since(StageTimes.Stage.VISIBILITY, t);
        // Read in chunks and hand each chunk's writes over at once: the next chunk's read overlaps them, and the
        // writers never wait for the whole batch to be read. The keys are distinct, so no two writes race.
        List<Future<List<RowRefusedException>>> pending = new ArrayList<>();
        Set<String> refused = new HashSet<>();
        int written = 0;
        boolean sent = false;
        try {
            for (int i = 0; i < distinct.size(); i += READ_CHUNK) {
                ItemWriter.Refresh refresh = read(distinct.subList(i, Math.min(distinct.size(), i + READ_CHUNK)));
                refusedRows.record(refresh.refused(), "tail", lsnOf);
                for (RowRefusedException e : refresh.refused()) refused.add(e.key());
                for (List<WriteRequest> part : refresher.batches(refresh.requests())) {
                    // every attempt bound to the tail's lease (ADR 6); rows DynamoDB itself refuses come back
                    pending.add(writers.submit(() -> refresher.write(part, lease)));
                }
                written += refresh.requests().size();
            }
            sent = true;
        } finally {
            if (!sent) awaitAll(pending); // a failed send leaves nothing landing behind it
        }
        SentBatch batch = new SentBatch(distinct, generation, pending, refused, lsnOf, written, t);
        inFlight.add(batch);
        return batch;
    }

    /**
     * Waits until every write of {@code batch} ended, then keeps the refused list: a row DynamoDB refused goes on it,
     * a key written leaves it.
     *
     * @return items put or deleted
     * @throws Exception the first write that failed, once none of the batch's is still in flight
     */
    synchronized int land(SentBatch batch) throws Exception {
        if (batch.keys.isEmpty()) return 0; // nothing was sent
        try {
            awaitAll(batch.writes);
        } finally {
            inFlight.remove(batch);
        }
        List<RowRefusedException> byDynamo = new ArrayList<>();
        for (Future<List<RowRefusedException>> f : batch.writes) byDynamo.addAll(f.get()); // all done, none failed
        refusedRows.record(byDynamo, "tail", batch.lsnOf);
        Set<String> refused = new HashSet<>(batch.refused);
        for (RowRefusedException e : byDynamo) refused.add(e.key());
        List<String> landed = new ArrayList<>(batch.keys.size());
        for (String key : batch.keys) if (!refused.contains(key)) landed.add(key);
        refusedRows.clear(landed); // after the writes landed: a listed row stays listed until its item is its row
        stages.since(StageTimes.Stage.READ_AND_WRITE, batch.sentNanos);
        return batch.written;
    }

    /**
     * Logs keys about to be written in their scope's log, under the landing writes' generation (waiting for them if
     * one moved on). @return each scope's generation
     */
    private List<Optional<String>> record(List<String> distinct) throws Exception {
        // with parts, the logs no cutover writes to are left alone: one read of all instead of a script each
        List<Optional<String>> logging = scopes.size() == 1 ? null : KeyLog.currents(redis, scopes.keys());
        if (logging != null
                && logging.stream().allMatch(Optional::isEmpty)
                && (inFlight.isEmpty() || inFlight.get(0).generations.stream().allMatch(Optional::isEmpty))) {
            return logging; // no part logs, and nothing landing was logged: no key's part is needed
        }
        List<List<String>> byScope = scopes.split(distinct);
        if (!inFlight.isEmpty()) {
            List<Optional<String>> expected = inFlight.get(0).generations;
            List<Optional<String>> out = new ArrayList<>(scopes.size());
            for (int i = 0; i < scopes.size(); i++) {
                if (logging != null
                        && logging.get(i).isEmpty()
                        && expected.get(i).isEmpty()) {
                    out.add(Optional.empty());
                    continue;
                }
                KeyLog.Logged logged = keyLogs.get(i).recordUnder(expected.get(i), byScope.get(i));
                if (!logged.logged()) break;
                out.add(logged.generation());
            }
            if (out.size() == scopes.size()) return out;
            awaitInFlight(); // a cutover started a generation: what was logged under the old one lands first
        }
        List<Optional<String>> out = new ArrayList<>(scopes.size());
        for (int i = 0; i < scopes.size(); i++) {
            boolean idle = logging != null && logging.get(i).isEmpty();
            out.add(idle ? Optional.empty() : keyLogs.get(i).record(byScope.get(i)));
        }
        return out;
    }

    /**
     * Waits until no write sent earlier is in flight, and forgets those batches: the stream calls this when its
     * engine stopped, so a batch it never landed (it is delivered again) cannot hold up the next engine's batches.
     */
    synchronized void drain() throws InterruptedException {
        awaitInFlight();
    }

    /** Waits until no write sent earlier is in flight; a failure is left to whoever lands its batch. */
    private void awaitInFlight() throws InterruptedException {
        for (SentBatch earlier : inFlight) {
            try {
                awaitAll(earlier.writes);
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                // reported by land(earlier), which retries that batch
            }
        }
        inFlight.clear();
    }

    TailHold hold() {
        return hold;
    }

    /**
     * Acknowledges scope {@code scope}'s hold under this lock, so no write of reconciliation or a repair is in flight
     * when the cutover learns the tail holds.
     */
    synchronized void acknowledge(int scope, ForwardHold.Request request, long appliedLsn) {
        lease.check(); // a tail that may have lost its lease answers for nothing
        if (!inFlight.isEmpty()) throw new IllegalStateException("a hold is answered only with no write in flight");
        hold.requests(scope).acknowledge(request, appliedLsn);
    }

    TailScopes scopes() {
        return scopes;
    }

    /**
     * Waits for every write of this call, failed or not, before returning or throwing: a retry must never run
     * beside a write of the failed attempt, which carries an older read and could land last.
     */
    static void awaitAll(List<? extends Future<?>> pending) throws Exception {
        Exception first = null;
        boolean interrupted = false;
        for (Future<?> f : pending) {
            while (true) {
                try {
                    f.get();
                } catch (ExecutionException e) {
                    if (first == null) first = e.getCause() instanceof Exception cause ? cause : e;
                } catch (CancellationException e) {
                    // never started
                } catch (InterruptedException e) {
                    for (Future<?> g : pending) g.cancel(false); // those not started never start
                    if (first == null) first = e;
                    interrupted = true;
                    continue; // and those running are still waited for
                }
                break;
            }
        }
        if (interrupted) Thread.currentThread().interrupt(); // the caller still learns it was asked to stop
        if (first != null) throw first;
    }

    private void awaitVisible(Collection<Long> committed) throws SQLException, InterruptedException {
        try {
            if (connection == null || connection.isClosed()) connection = session.open();
            boolean[] waited = {false};
            CommitVisibility.await(connection, committed, VISIBLE_WITHIN, () -> waited[0] = true);
            if (waited[0]) onCommitWait.run();
        } catch (SQLException e) {
            closeConnection();
            throw e;
        }
    }

    private ItemWriter.Refresh read(List<String> keys) throws SQLException {
        try {
            if (connection == null || connection.isClosed()) connection = session.open();
            return refresher.read(connection, keys);
        } catch (SQLException e) {
            closeConnection(); // a restarted Postgres leaves a dead connection: the next call opens a new one
            throw e;
        }
    }

    private void closeConnection() {
        try {
            if (connection != null) connection.close();
        } catch (SQLException ignored) {
            // it is being discarded because it failed
        }
        connection = null;
    }

    @Override
    public synchronized void close() {
        writers.shutdownNow();
        closeConnection();
    }
}
