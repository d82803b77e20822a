package io.rebalance.mover;

import io.rebalance.core.codec.RowCodec;
import io.rebalance.core.codec.RowRefusedException;
import io.rebalance.core.codec.SourceRow;
import io.rebalance.core.dynamo.BatchWriter;
import io.rebalance.core.slot.Slot;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.lease.LeaseLost;
import io.rebalance.protocol.lease.OwnedLease;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * Copies one slot, page by page, from its saved {@code last_id} to its end: the middle layer of recovery. A step
 * that fails is abandoned, and the next attempt starts again from the progress the coordinator saved
 * ({@link SlotStore}).
 *
 * <p>Per page: read (keyset) → encode → renew the lease → write → save progress. The write is bound to the lease:
 * each call and each attempt is checked just before it is sent and given no more time than the lease has left, so
 * none lands once another worker can hold the slot (ADR 6 states the bound). The member check inside the progress
 * save keeps a worker that paused past its lease from moving {@code last_id}. A worker whose write would outlive its
 * lease sends nothing more, says so, and leaves the slot to its new owner.
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
        OwnedLease lease = a.lease();
        // Acquired. Compaction moves the watermark before deleting states, so re-reading it now is sound.
        Slot watermark = ctx.runState().watermark();
        if (watermark != null && !slot.isOlderThan(watermark)) {
            ctx.slots().releaseCompacted(slot, lease);
            return Outcome.FINISHED;
        }
        MDC.put("slot", slot.name());
        String member = lease.member(); // names this acquisition in every write to the slot's state
        try {
            return copyLeased(slot, lease, a, keepGoing);
        } catch (InterruptedException e) {
            throw e; // stopping, not failing
        } catch (Exception | Error e) {
            try {
                ctx.slots().recordError(slot, member, describe(e));
            } catch (RuntimeException ignored) {
                // The error itself is what the caller reports; recording it is best effort.
            }
            throw e;
        } finally {
            MDC.remove("slot");
        }
    }

    private Outcome copyLeased(Slot slot, OwnedLease lease, SlotStore.Acquire a, BooleanSupplier keepGoing)
            throws Exception {
        String owner = lease.member();
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
                lease.release();
                return Outcome.STOPPED;
            }
            String after = lastId;
            List<SourceRow> rows =
                    ctx.retrier().call("read page of slot " + slot, () -> readPage(slot, after, pageSize));
            if (rows.isEmpty()) return finish(slot, owner, lastId);
            List<WriteRequest> puts = new ArrayList<>(rows.size());
            List<RowRefusedException> refused = new ArrayList<>();
            for (SourceRow row : rows) {
                try {
                    puts.add(BatchWriter.put(codec.encode(row)));
                } catch (RowRefusedException e) {
                    refused.add(e); // one row DynamoDB cannot hold must not hold up the slot: it is listed instead
                }
            }
            ctx.hooks().at(Phase.PAGE_READ, slot, owner);

            int byDynamo;
            try {
                ctx.retrier()
                        .run(
                                "renew lease of slot " + slot,
                                lease::renew); // a coordinator blip is retried; a loss is not
                ctx.hooks().at(Phase.BEFORE_WRITE, slot, owner);
                // Every call and every attempt of this write, resubmissions included, is checked against the lease
                // and given no more time than it has left (ADR 6): none lands once another worker can hold the slot.
                // An item DynamoDB itself refuses as invalid is isolated and returned, the others land.
                // A batch sent whole whose lease is gone when its call ends (the process paused after the last
                // check) has its keys written again from this connection before the loss is reported.
                List<RowRefusedException> invalid = ctx.refresher().write(puts, lease, connection);
                for (RowRefusedException e : invalid) refused.add(inSlot(e, slot));
                byDynamo = invalid.size();
            } catch (LeaseLost e) {
                return lostLease(
                        slot, owner, e.holder(), "while writing (" + e.getMessage() + "; nothing more is sent)");
            }
            if (!refused.isEmpty()) refuse(slot, refused);
            ctx.counters().rowsWritten(puts.size() - byDynamo);
            ctx.counters().rowsRefused(refused.size());
            ctx.hooks().at(Phase.PAGE_WRITTEN, slot, owner);

            String newLast = rows.get(rows.size() - 1).key();
            // Counted before the save: a kill between the two then re-copies and recounts the page (the count runs
            // over by a page), where counting after would lose the page from the count for good (it would run under).
            ctx.runState().addRowsCopied(rows.size() - refused.size()); // a refused row is not copied
            String holder = ctx.slots().saveProgress(slot, owner, newLast, rows.size());
            if (holder != null) return lostLease(slot, owner, holder, "saving progress");
            lastId = newLast;
            ctx.hooks().at(Phase.PROGRESS_SAVED, slot, owner);
            if (rows.size() < pageSize) return finish(slot, owner, lastId);
        }
    }

    /** Lists rows DynamoDB cannot hold (status, verify and the cutover see them); the copy goes on without them. */
    private void refuse(Slot slot, List<RowRefusedException> refused) {
        ctx.retrier()
                .run("list refused rows of slot " + slot, () -> ctx.refused().record(refused, "copy", key -> null));
        ctx.runState()
                .event("refused slot=" + slot + " rows=" + refused.size() + " first="
                        + refused.get(0).key());
        log.warn(
                "slot {}: {} row{} refused, listed and left out (first: {})",
                slot,
                refused.size(),
                refused.size() == 1 ? "" : "s",
                refused.get(0).getMessage());
    }

    /** DynamoDB's refusal names no slot; the copy knows it. */
    private static RowRefusedException inSlot(RowRefusedException e, Slot slot) {
        return e.slot() != null ? e : new RowRefusedException(e.key(), e.column(), null, e.reason(), slot.name());
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
}
