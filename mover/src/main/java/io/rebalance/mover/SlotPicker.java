package io.rebalance.mover;

import io.rebalance.core.slot.Slot;
import io.rebalance.core.slot.SlotRange;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The manager's choice of the next slot: walks from the watermark towards the oldest slot and takes the lease of
 * the first one that is neither finished, leased, held by this process, nor resting after permanent failures. When
 * the walk reaches the end, the next call starts again from the watermark, which is how slots of dead workers
 * (leases expired) are picked up; the walk notes the earliest end of the leases it met ({@link #untilLeaseEnds}), so
 * the manager starts the next one as that slot comes free.
 *
 * <p>Slots seen FINISHED are skipped without asking Redis: while one slot holds the watermark back, every walk
 * would otherwise cost a Lua call per finished slot behind it. That memory is dropped every hour, so a finished
 * slot whose state expired before compaction (after {@code mover.stateTtl}) is still found and copied again rather
 * than holding the run back forever.
 */
final class SlotPicker implements Picker {
    private static final Duration FORGET_FINISHED = Duration.ofHours(1);

    private final SlotRange range;
    private final SlotStore slots;
    private final RunState run;
    private final Supplier<String> newOwner;
    private final Set<Slot> finishedSeen = ConcurrentHashMap.newKeySet();
    private final Map<Slot, Long> failedUntil = new ConcurrentHashMap<>();
    private long finishedSeenSince = System.currentTimeMillis();
    private Slot cursor;
    /** The earliest end of a lease held elsewhere seen in the current walk, epoch ms; Long.MAX_VALUE for none. */
    private long leaseEndsAt = Long.MAX_VALUE;
    /** What the last walk that ended saw: the earliest end of a lease held elsewhere. */
    private volatile long lastWalkLeaseEndsAt = Long.MAX_VALUE;

    SlotPicker(SlotRange range, SlotStore slots, RunState run, Supplier<String> newOwner) {
        this.range = range;
        this.slots = slots;
        this.run = run;
        this.newOwner = newOwner;
    }

    /** @return an acquired slot, or null when none is free until the next walk */
    @Override
    public Assignment next(Set<Slot> busy, BooleanSupplier stop) {
        long now = System.currentTimeMillis();
        if (cursor == null) {
            if (now - finishedSeenSince > FORGET_FINISHED.toMillis()) {
                finishedSeen.clear();
                finishedSeenSince = now;
            }
            Slot watermark = run.watermark();
            cursor = watermark == null ? range.newest() : range.after(watermark);
            leaseEndsAt = Long.MAX_VALUE;
        }
        while (cursor != null && range.contains(cursor) && !stop.getAsBoolean()) {
            Slot s = cursor;
            cursor = range.after(cursor);
            if (busy.contains(s) || finishedSeen.contains(s) || failedUntil.getOrDefault(s, 0L) > now) continue;
            String owner = newOwner.get();
            SlotStore.Acquire a = slots.acquire(s, owner);
            if (a.kind() == SlotStore.Acquire.Kind.ACQUIRED) return new Assignment(s, owner);
            if (a.kind() == SlotStore.Acquire.Kind.FINISHED) finishedSeen.add(s);
            else leaseEndsAt = Math.min(leaseEndsAt, now + Math.max(0, a.holderTtlMs()));
        }
        cursor = null; // the walk is over: the next call starts again from the watermark
        lastWalkLeaseEndsAt = leaseEndsAt;
        return null;
    }

    @Override
    public Optional<Duration> untilLeaseEnds() {
        long at = lastWalkLeaseEndsAt;
        return at == Long.MAX_VALUE
                ? Optional.empty()
                : Optional.of(Duration.ofMillis(Math.max(0, at - System.currentTimeMillis())));
    }

    @Override
    public void finished(Slot slot) {
        finishedSeen.add(slot);
    }

    @Override
    public void failedPermanently(Slot slot) {
        failedUntil.put(slot, System.currentTimeMillis() + FAILED_SLOT_PAUSE.toMillis());
    }
}
