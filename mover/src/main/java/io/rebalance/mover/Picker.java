package io.rebalance.mover;

import io.rebalance.core.slot.Slot;
import io.rebalance.core.slot.SlotRange;
import io.rebalance.mover.postgres.PostgresSlotStore;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The manager's choice of the next slot to copy, its lease taken: {@link SlotPicker} walks the range and asks for
 * each slot's lease (Redis); {@link ClaimPicker} claims the next slot of the coordinator's queue (Postgres).
 */
interface Picker {
    /**
     * The picker for {@code slots}: Postgres hands out the next slot in one statement; Redis has no queue, so the walk
     * asks slot by slot.
     */
    static Picker of(SlotStore slots, RunState run, SlotRange range, Supplier<String> newOwner) {
        return slots instanceof PostgresSlotStore queue
                ? new ClaimPicker(queue, range, newOwner)
                : new SlotPicker(range, slots, run, newOwner);
    }

    /** Slots whose step failed permanently rest this long before they are offered again. */
    Duration FAILED_SLOT_PAUSE = Duration.ofSeconds(30);

    /** An acquired slot and the lease owner it was acquired as. */
    record Assignment(Slot slot, String owner) {}

    /**
     * @param busy slots this process already holds
     * @param stop checked between slots
     * @return an acquired slot, or null when none is free now
     */
    Assignment next(Set<Slot> busy, BooleanSupplier stop);

    /**
     * After {@link #next} found nothing: how long until a slot it saw leased by another holder may be free (that
     * lease's time left, the earliest of them), or empty when it saw none, so the manager looks again then rather than
     * after a fixed pause.
     */
    Optional<Duration> untilLeaseEnds();

    void finished(Slot slot);

    void failedPermanently(Slot slot);
}
