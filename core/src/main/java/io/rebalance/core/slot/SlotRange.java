package io.rebalance.core.slot;

import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * The slots of one run, from {@code newest} down to {@code oldest}, both inclusive, in copy order, then, with
 * {@code noTime}, {@link Slot#NO_TIME} (the rows of a time column that is NULL or infinite), copied last.
 */
public record SlotRange(Slot newest, Slot oldest, boolean noTime) implements Iterable<Slot> {
    public SlotRange {
        if (newest.noTime() || oldest.noTime()) {
            throw new IllegalArgumentException("the " + Slot.NO_TIME_NAME + " slot is no hour: it ends no range");
        }
        if (newest.isOlderThan(oldest)) {
            throw new IllegalArgumentException(
                    "slot range is inverted: newest " + newest + " is older than oldest " + oldest);
        }
    }

    public SlotRange(Slot newest, Slot oldest) {
        this(newest, oldest, false);
    }

    public long count() {
        return newest.slotsAfter(oldest) + 1 + (noTime ? 1 : 0);
    }

    public boolean contains(Slot s) {
        if (s.noTime()) return noTime;
        return !s.isOlderThan(oldest) && !newest.isOlderThan(s);
    }

    /** The slot copied last: {@link Slot#NO_TIME} when the range has it, else the oldest hour. */
    public Slot last() {
        return noTime ? Slot.NO_TIME : oldest;
    }

    /** The slot copied after {@code s}, or null after the last. */
    public Slot after(Slot s) {
        if (s.noTime()) return null;
        if (s.equals(oldest)) return noTime ? Slot.NO_TIME : null;
        return s.older();
    }

    /** How many slots are copied up to {@code s} (inclusive), counting from the newest. */
    public long through(Slot s) {
        return s.noTime() ? count() : newest.slotsAfter(s) + 1;
    }

    /** Slots from {@code from} (inclusive) down to the last. */
    public Iterable<Slot> from(Slot from) {
        return () -> new Iterator<>() {
            Slot next = from;

            @Override
            public boolean hasNext() {
                return next != null && (next.noTime() ? noTime : !next.isOlderThan(oldest));
            }

            @Override
            public Slot next() {
                if (!hasNext()) throw new NoSuchElementException();
                Slot s = next;
                next = after(next);
                return s;
            }
        };
    }

    @Override
    public Iterator<Slot> iterator() {
        return from(newest).iterator();
    }
}
