package io.rebalance.core.slot;

import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * The slots of one run, from {@code newest} down to {@code oldest}, both inclusive, in copy order.
 */
public record SlotRange(Slot newest, Slot oldest) implements Iterable<Slot> {
    public SlotRange {
        if (newest.isOlderThan(oldest)) {
            throw new IllegalArgumentException(
                    "slot range is inverted: newest " + newest + " is older than oldest " + oldest);
        }
    }

    public long count() {
        return newest.hoursAfter(oldest) + 1;
    }

    public boolean contains(Slot s) {
        return !s.isOlderThan(oldest) && !newest.isOlderThan(s);
    }

    /** Slots from {@code from} (inclusive) down to the oldest. */
    public Iterable<Slot> from(Slot from) {
        return () -> new Iterator<>() {
            Slot next = from;

            @Override
            public boolean hasNext() {
                return !next.isOlderThan(oldest);
            }

            @Override
            public Slot next() {
                if (!hasNext()) throw new NoSuchElementException();
                Slot s = next;
                next = next.older();
                return s;
            }
        };
    }

    @Override
    public Iterator<Slot> iterator() {
        return from(newest).iterator();
    }
}
