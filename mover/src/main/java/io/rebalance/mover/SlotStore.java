package io.rebalance.mover;

import io.rebalance.core.retry.Retrier;
import io.rebalance.core.slot.Slot;
import io.rebalance.protocol.lease.LeaseStore;
import io.rebalance.protocol.lease.OwnedLease;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * A slot's lease and state, kept in Redis ({@code RedisSlotStore}) or in a Postgres table ({@code PostgresSlotStore}).
 * A worker can save progress or finish a slot only while it holds the slot's lease (the one lease of {@code
 * protocol/lease}; its member, {@code <owner>#<token>}, names one acquisition), checked in the same step as the write.
 */
public interface SlotStore {
    /**
     * The answer to an acquire: exactly one of finished, leased by someone else, or acquired with its progress.
     *
     * @param lease the lease when ACQUIRED (its member names this acquisition in every later call), else null
     */
    public record Acquire(Kind kind, String holder, long holderTtlMs, String lastId, long rows, OwnedLease lease) {
        public enum Kind {
            FINISHED,
            LEASED,
            ACQUIRED
        }

        /** Progress saved by an earlier owner, or null when the slot starts from its beginning. */
        public String resumeFrom() {
            return lastId == null || lastId.isEmpty() ? null : lastId;
        }
    }

    /**
     * Takes the slot's lease (or extends it, when {@code owner} holds it already), then reads its state under the
     * lease: a FINISHED slot's lease is given back at once.
     */
    Acquire acquire(Slot slot, String owner);

    /**
     * Adds {@code rows} to the slot's count and saves {@code lastId} as where it resumes, only under the lease
     * {@code member} holds. @return null when saved, otherwise the holder that owns the slot now ("" when it lapsed)
     */
    default String saveProgress(Slot slot, String member, String lastId, long rows) {
        return save(slot, member, lastId, rows, "IN_PROGRESS");
    }

    /** Marks the slot FINISHED and frees its lease. @return null when done, otherwise the current holder */
    default String finish(Slot slot, String member, String lastId, long rows) {
        return save(slot, member, lastId == null ? "" : lastId, rows, "FINISHED");
    }

    /**
     * Saves progress with {@code status} (IN_PROGRESS extends the lease, FINISHED gives it up) in one step that checks
     * the lease. @return null when saved, otherwise the holder now
     */
    String save(Slot slot, String member, String lastId, long rows, String status);

    /** Notes why a step of the slot failed, for {@code status}, only under the lease {@code member} holds. */
    void recordError(Slot slot, String member, String message);

    /** Gives the slot's lease back if {@code owner} (or the member {@code owner}) holds it. */
    void release(Slot slot, String owner);

    /** Gives back the lease of a slot compaction has passed (a worker raced the keeper to it). */
    void releaseCompacted(Slot slot, OwnedLease lease);

    /** The slot's state (status, last_id, rows, owner, error); empty when none is stored. */
    Map<String, String> state(Slot slot);

    /**
     * Lets go of what the store keeps for slots the watermark has passed (the keeper calls it after moving the
     * watermark over them): they are never copied again.
     */
    void forget(List<Slot> compacted);

    /** The member holding the slot's lease, or null. */
    String leaseHolder(Slot slot);

    /** Where a slot's copy stands, as the dashboard's grid shows it. */
    enum Copy {
        FINISHED,
        LEASED,
        WAITING
    }

    /** Each slot's {@link Copy}, in {@code slots}' order, read in one round trip a thousand slots. */
    List<Copy> copies(List<Slot> slots);

    /** The release every store makes: the lease given back only if {@code owner} (or member {@code owner}) holds it. */
    static void release(Retrier retrier, LeaseStore leases, String key, Slot slot, String owner) {
        retrier.call("release slot " + slot, () -> {
            String holder = leases.holder(key);
            if (holder != null && (holder.equals(owner) || holder.startsWith(owner + "#"))) {
                leases.release(key, holder); // refused if it changed hands since the read
            }
            return null;
        });
    }

    /**
     * The acquire every store makes: the lease first (through {@code leases}, under {@code key}), then the state read
     * under it; a FINISHED slot's lease is given back at once.
     */
    static Acquire acquire(
            SlotStore store, Retrier retrier, LeaseStore leases, String key, Slot slot, String owner, Duration ttl) {
        OwnedLease.Attempt a = retrier.call("acquire slot " + slot, () -> OwnedLease.acquire(leases, key, owner, ttl));
        if (a.lease() == null) {
            return new Acquire(
                    Acquire.Kind.LEASED, a.reply().member(), a.reply().remainingMs(), null, 0, null);
        }
        Map<String, String> state = store.state(slot);
        if ("FINISHED".equals(state.get("status"))) {
            retrier.run("release finished slot " + slot, () -> a.lease().release());
            return new Acquire(Acquire.Kind.FINISHED, null, 0, null, 0, null);
        }
        return new Acquire(
                Acquire.Kind.ACQUIRED,
                a.lease().member(),
                0,
                state.getOrDefault("last_id", ""),
                Long.parseLong(state.getOrDefault("rows", "0")),
                a.lease());
    }
}
