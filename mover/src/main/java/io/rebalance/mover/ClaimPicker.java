package io.rebalance.mover;

import io.rebalance.core.slot.Slot;
import io.rebalance.core.slot.SlotRange;
import io.rebalance.mover.postgres.PostgresSlotStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The next slot from the Postgres coordinator's queue ({@link PostgresSlotStore#claimNext}): the newest claimable
 * one, never a slot this process holds or lets rest after permanent failures. Before its first claim a process adds
 * the run's slots that have no row yet, so the queue holds the whole range whichever process starts first.
 */
final class ClaimPicker implements Picker {
    private final PostgresSlotStore queue;
    private final SlotRange range;
    private final Supplier<String> newOwner;
    private final Map<Slot, Long> failedUntil = new ConcurrentHashMap<>();
    private volatile boolean planned;
    /** The slots the last claim passed over as this process's own or resting: their leases end nothing for it. */
    private volatile Set<Slot> lastExcept = Set.of();

    ClaimPicker(PostgresSlotStore queue, SlotRange range, Supplier<String> newOwner) {
        this.queue = queue;
        this.range = range;
        this.newOwner = newOwner;
    }

    @Override
    public Assignment next(Set<Slot> busy, BooleanSupplier stop) {
        if (!planned) {
            List<Slot> all = new ArrayList<>();
            range.forEach(all::add);
            queue.plan(all);
            planned = true;
        }
        long now = System.currentTimeMillis();
        failedUntil.values().removeIf(until -> until <= now);
        Set<Slot> except = new HashSet<>(busy);
        except.addAll(failedUntil.keySet());
        lastExcept = except;
        String owner = newOwner.get();
        return queue.claimNext(owner, except)
                .map(c -> new Assignment(c.slot(), owner))
                .orElse(null);
    }

    @Override
    public Optional<Duration> untilLeaseEnds() {
        return queue.untilLeaseEnds(lastExcept);
    }

    /** Nothing to remember: a FINISHED row has left the claimable ones. */
    @Override
    public void finished(Slot slot) {}

    @Override
    public void failedPermanently(Slot slot) {
        failedUntil.put(slot, System.currentTimeMillis() + FAILED_SLOT_PAUSE.toMillis());
    }
}
