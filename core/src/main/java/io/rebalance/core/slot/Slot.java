package io.rebalance.core.slot;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;

/**
 * One hour of rows, named like {@code 20241020.02} (UTC). Slots are copied newest to oldest, so the most recent
 * data is in DynamoDB first; {@link #older()} is the next slot to copy.
 *
 * <p>{@link #NO_TIME} is the slot of rows that have no hour (slots from a time column that is NULL or ±infinity): it
 * sorts older than every hour, so it is copied last, and it has no neighbours.
 */
public record Slot(Instant start) implements Comparable<Slot> {
    private static final DateTimeFormatter NAME =
            DateTimeFormatter.ofPattern("yyyyMMdd.HH").withZone(ZoneOffset.UTC);
    /** Strict: hour 24 or a 30th of February is no slot, not the next day's (the default resolver rolls them over). */
    private static final DateTimeFormatter PARSE =
            DateTimeFormatter.ofPattern("uuuuMMdd.HH").withResolverStyle(java.time.format.ResolverStyle.STRICT);

    /** Rows whose slot time is NULL or ±infinity; named {@value #NO_TIME_NAME}. Instant.MIN is no hour Postgres has. */
    public static final Slot NO_TIME = new Slot(Instant.MIN);

    public static final String NO_TIME_NAME = "notime";

    public Slot {
        if (!start.truncatedTo(ChronoUnit.HOURS).equals(start)) {
            throw new IllegalArgumentException("slot start " + start + " is not on the hour");
        }
    }

    /** The slot holding {@code t}. */
    public static Slot containing(Instant t) {
        return new Slot(t.truncatedTo(ChronoUnit.HOURS));
    }

    /** @throws IllegalArgumentException naming the expected form */
    public static Slot parse(String name) {
        if (NO_TIME_NAME.equals(name)) return NO_TIME;
        try {
            java.time.LocalDateTime local = java.time.LocalDateTime.parse(name, PARSE);
            return new Slot(local.toInstant(ZoneOffset.UTC));
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(
                    "'" + name + "' is not a slot; write it like 20241020.02 (UTC day and hour), or " + NO_TIME_NAME
                            + " for the rows with no time");
        }
    }

    public Instant end() {
        noTimeHasNoNeighbours();
        return start.plus(1, ChronoUnit.HOURS);
    }

    public Slot older() {
        noTimeHasNoNeighbours();
        return new Slot(start.minus(1, ChronoUnit.HOURS));
    }

    public Slot newer() {
        noTimeHasNoNeighbours();
        return new Slot(start.plus(1, ChronoUnit.HOURS));
    }

    public boolean noTime() {
        return this.equals(NO_TIME);
    }

    private void noTimeHasNoNeighbours() {
        if (noTime()) throw new IllegalStateException("the " + NO_TIME_NAME + " slot is no hour: it has no neighbours");
    }

    public boolean isOlderThan(Slot other) {
        return start.isBefore(other.start);
    }

    /** Whole hours from {@code other} up to this slot (0 when equal). */
    public long hoursAfter(Slot other) {
        return ChronoUnit.HOURS.between(other.start, start);
    }

    public String name() {
        return noTime() ? NO_TIME_NAME : NAME.format(start);
    }

    @Override
    public int compareTo(Slot o) {
        return start.compareTo(o.start);
    }

    @Override
    public String toString() {
        return name();
    }
}
