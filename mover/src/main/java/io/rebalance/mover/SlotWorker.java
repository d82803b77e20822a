package io.rebalance.mover;

import io.rebalance.core.RebalanceException;
import io.rebalance.core.codec.RowCodec;
import io.rebalance.core.codec.SourceRow;
import io.rebalance.core.dynamo.BatchWriter;
import io.rebalance.core.slot.Slot;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Copies one slot, page by page, from its saved {@code last_id} to its end: the middle layer of recovery. A step
 * that fails is abandoned, and the next attempt starts again from the progress saved in Redis.
 *
 * <p>Per page: read (keyset) → encode → renew the lease → write → save progress. The lease check before the write
 * and the owner check inside the progress save are what keep a worker that paused past its lease from writing or
 * moving {@code last_id} once another worker has the slot. (A pause between the renewal and the write itself
 * cannot be excluded by any lease; for the backfill it only rewrites rows the new owner writes too. The tail's
 * ordering rules, not the lease, protect newer changes.)
 *
 * <p>One instance per worker thread; it keeps its Postgres connection across slots and reopens it after a failure.
 */
public final class SlotWorker {
    private static final Logger log = LoggerFactory.getLogger(SlotWorker.class);

    /** How a slot step ended. */
    public enum Outcome {
        /** Copied to its end and marked FINISHED (by this worker or earlier). */
        FINISHED,
        /** Another worker holds it, or this worker lost its lease: leave the slot alone. */
        SKIPPED,
        /** The run is stopping: lease released, progress kept. */
        STOPPED
    }

    private final WorkerContext ctx;
    private final String workerName;
    private Connection connection;

    SlotWorker(WorkerContext ctx, String workerName) {
        this.ctx = ctx;
        this.workerName = workerName;
    }

    /**
     * One attempt at the slot.
     *
     * @param owner the lease token for this attempt, unique to it
     * @param keepGoing false once the run or the process is stopping
     * @throws Exception when the step failed; progress saved so far stands and the caller retries later
     */
    public Outcome copy(Slot slot, String owner, BooleanSupplier keepGoing) throws Exception {
        SlotStore.Acquire a = ctx.slots().acquire(slot, owner);
        if (a.kind() == SlotStore.Acquire.Kind.FINISHED) return Outcome.FINISHED;
        if (a.kind() == SlotStore.Acquire.Kind.LEASED) return Outcome.SKIPPED;
        // Acquired. Compaction moves the watermark before deleting states, so re-reading it now is sound.
        Slot watermark = ctx.runState().watermark();
        if (watermark != null && !slot.isOlderThan(watermark)) {
            ctx.slots().release(slot, owner);
            return Outcome.FINISHED;
        }
        MDC.put("slot", slot.name());
        try {
            return copyLeased(slot, owner, a, keepGoing);
        } catch (InterruptedException e) {
            throw e; // stopping, not failing
        } catch (Exception | Error e) {
            try {
                ctx.slots().recordError(slot, owner, describe(e));
            } catch (RuntimeException ignored) {
                // The error itself is what the caller reports; recording it is best effort.
            }
            throw e;
        } finally {
            MDC.remove("slot");
        }
    }

    private Outcome copyLeased(Slot slot, String owner, SlotStore.Acquire a, BooleanSupplier keepGoing)
            throws Exception {
        String lastId = a.resumeFrom();
        if (lastId != null) {
            log.info("slot {} resumes after last_id {} ({} rows copied before)", slot, lastId, a.rows());
            ctx.runState()
                    .event("resume slot=" + slot + " last_id=" + lastId + " rows_before=" + a.rows() + " by=" + owner);
        }
        ctx.hooks().at(Phase.LEASED, slot, owner);
        RowCodec codec = ctx.codec();
        int pageSize = ctx.pageSize();
        while (true) {
            if (!keepGoing.getAsBoolean()) {
                ctx.slots().release(slot, owner);
                return Outcome.STOPPED;
            }
            String after = lastId;
            List<SourceRow> rows =
                    ctx.retrier().call("read page of slot " + slot, () -> readPage(slot, after, pageSize));
            if (rows.isEmpty()) return finish(slot, owner, lastId);
            List<Map<String, AttributeValue>> items = new ArrayList<>(rows.size());
            for (SourceRow row : rows) items.add(codec.encode(row));
            ctx.hooks().at(Phase.PAGE_READ, slot, owner);

            String holder = ctx.slots().renew(slot, owner);
            if (holder != null) return lostLease(slot, owner, holder, "before writing");
            ctx.hooks().at(Phase.BEFORE_WRITE, slot, owner);
            try {
                // A rate-limited page can take longer than the lease: renew while writing, not only before.
                ctx.writer().write(items, new LeaseGuard(slot, owner));
            } catch (LeaseLost e) {
                return lostLease(slot, owner, e.holder, "while writing");
            }
            ctx.counters().rowsWritten(items.size());
            ctx.hooks().at(Phase.PAGE_WRITTEN, slot, owner);

            String newLast = rows.get(rows.size() - 1).key();
            // Counted before the save: a kill between the two then re-copies and recounts the page (the count runs
            // over by a page), where counting after would lose the page from the count for good (it would run under).
            ctx.runState().addRowsCopied(rows.size());
            holder = ctx.slots().saveProgress(slot, owner, newLast, rows.size());
            if (holder != null) return lostLease(slot, owner, holder, "saving progress");
            lastId = newLast;
            ctx.hooks().at(Phase.PROGRESS_SAVED, slot, owner);
            if (rows.size() < pageSize) return finish(slot, owner, lastId);
        }
    }

    private Outcome finish(Slot slot, String owner, String lastId) throws InterruptedException {
        String holder = ctx.slots().finish(slot, owner, lastId, 0);
        if (holder != null) return lostLease(slot, owner, holder, "finishing");
        ctx.runState().slotFinished();
        ctx.hooks().at(Phase.SLOT_FINISHED, slot, owner);
        log.debug("slot {} finished", slot);
        return Outcome.FINISHED;
    }

    private Outcome lostLease(Slot slot, String owner, String holder, String when) {
        String who = holder.isEmpty() ? "nobody (the lease expired)" : holder;
        log.warn(
                "slot {}: lease lost {}; it is now held by {}. This worker stops; the holder continues from the saved"
                        + " progress",
                slot,
                when,
                who);
        ctx.runState().event("lost-lease slot=" + slot + " owner=" + owner + " holder=" + who + " when=" + when);
        ctx.counters().leaseLost();
        return Outcome.SKIPPED;
    }

    private List<SourceRow> readPage(Slot slot, String after, int limit) throws SQLException {
        try {
            if (connection == null || connection.isClosed())
                connection = ctx.source().open();
            return ctx.pageReader().page(connection, slot, after, limit);
        } catch (SQLException e) {
            closeConnection(); // a terminated backend leaves a dead connection: reopen on the next attempt
            throw e;
        }
    }

    public void closeConnection() {
        if (connection != null) {
            try {
                connection.close();
            } catch (SQLException ignored) {
                // Already broken; nothing to release.
            }
            connection = null;
        }
    }

    static String describe(Throwable e) {
        String m = e instanceof RebalanceException ? e.getMessage() : e.toString();
        return m.length() > 500 ? m.substring(0, 500) + "..." : m;
    }

    public String name() {
        return workerName;
    }

    /** Renews the slot's lease during a long write, once a third of the TTL has passed since the last renewal. */
    private final class LeaseGuard implements BatchWriter.BeforeBatch {
        private final Slot slot;
        private final String owner;
        private long renewedAt = System.nanoTime();

        LeaseGuard(Slot slot, String owner) {
            this.slot = slot;
            this.owner = owner;
        }

        @Override
        public void check() {
            if (System.nanoTime() - renewedAt < ctx.leaseTtl().toNanos() / 3) return;
            String holder = ctx.slots().renew(slot, owner);
            if (holder != null) throw new LeaseLost(holder);
            renewedAt = System.nanoTime();
        }
    }

    private static final class LeaseLost extends RuntimeException {
        final String holder;

        LeaseLost(String holder) {
            super("lease lost to " + holder, null, false, false);
            this.holder = holder;
        }
    }
}
