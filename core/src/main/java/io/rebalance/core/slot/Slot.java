package io.rebalance.core.slot;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.format.ResolverStyle;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One slot of a run's rows: an hour, named like {@code 20241020.02} (UTC), or, where nothing in a row tells time
 * ({@code slots.timeFrom: none}), a range of the primary key, named by its place in the plan like {@code r000042}
 * ({@link KeyRanges}). Slots are copied newest to oldest (the last key range first), so the most recent data is in
 * DynamoDB first; {@link #older()} is the next slot to copy.
 *
 * <p>{@link #NO_TIME} is the slot of rows that have no hour (slots from a time column that is NULL or ±infinity): it
 * sorts older than every hour, so it is copied last, and it has no neighbours.
 *
 * @param kind an hour, a key range, or the rows with no hour
 * @param index hours since 1970 for an hour, the range's place in the plan (from 0) for a key range
 */
public record Slot(Kind kind, long index) implements Comparable<Slot> {
    private static final DateTimeFormatter NAME =
            DateTimeFormatter.ofPattern("yyyyMMdd.HH").withZone(ZoneOffset.UTC);
    /** Strict: hour 24 or a 30th of February is no slot, not the next day's (the default resolver rolls them over). */
    private static final DateTimeFormatter PARSE =
            DateTimeFormatter.ofPattern("uuuuMMdd.HH").withResolverStyle(ResolverStyle.STRICT);

    public enum Kind {
        NO_TIME,
        HOUR,
        RANGE
    }

    /** Rows whose slot time is NULL or ±infinity; named {@value #NO_TIME_NAME}. */
    public static final Slot NO_TIME = new Slot(Kind.NO_TIME, Long.MIN_VALUE);

    public static final String NO_TIME_NAME = "notime";

    /** Key ranges are named {@code r} and six digits, so names sort as the ranges do: a plan has at most this many. */
    public static final int MAX_RANGES = 1_000_000;

    private static final Pattern RANGE_NAME = Pattern.compile("r(\\d{6})");

    public Slot {
        if (kind == Kind.RANGE && (index < 0 || index >= MAX_RANGES))
            throw new IllegalArgumentException("key range " + index + " is outside 0.." + (MAX_RANGES - 1));
    }

    /** The slot holding {@code t}. */
    public static Slot containing(Instant t) {
        return new Slot(Kind.HOUR, Math.floorDiv(t.getEpochSecond(), 3600));
    }

    /** The {@code index}-th key range of a plan, from 0. */
    public static Slot range(long index) {
        return new Slot(Kind.RANGE, index);
    }

    /** @throws IllegalArgumentException naming the expected forms */
    public static Slot parse(String name) {
        if (NO_TIME_NAME.equals(name)) return NO_TIME;
        Matcher range = RANGE_NAME.matcher(name);
        if (range.matches()) return range(Long.parseLong(range.group(1)));
        try {
            LocalDateTime local = LocalDateTime.parse(name, PARSE);
            return containing(local.toInstant(ZoneOffset.UTC));
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(
                    "'" + name + "' is not a slot; write it like 20241020.02 (UTC day and hour), r000042 (a key range),"
                            + " or " + NO_TIME_NAME + " for the rows with no time");
        }
    }

    /** The hour's first instant. */
    public Instant start() {
        if (kind != Kind.HOUR) throw new IllegalStateException("slot " + name() + " is no hour: it has no start");
        return Instant.ofEpochSecond(index * 3600);
    }

    public Instant end() {
        return start().plus(1, ChronoUnit.HOURS);
    }

    public Slot older() {
        noTimeHasNoNeighbours();
        return new Slot(kind, index - 1);
    }

    public Slot newer() {
        noTimeHasNoNeighbours();
        return new Slot(kind, index + 1);
    }

    public boolean noTime() {
        return kind == Kind.NO_TIME;
    }

    /** A range of the primary key ({@code slots.timeFrom: none}), not an hour. */
    public boolean keyRange() {
        return kind == Kind.RANGE;
    }

    private void noTimeHasNoNeighbours() {
        if (noTime()) throw new IllegalStateException("the " + NO_TIME_NAME + " slot is no hour: it has no neighbours");
    }

    public boolean isOlderThan(Slot other) {
        return compareTo(other) < 0;
    }

    /** Slots from {@code other} up to this one (0 when equal): whole hours, or key ranges. */
    public long slotsAfter(Slot other) {
        return index - other.index;
    }

    public String name() {
        return switch (kind) {
            case NO_TIME -> NO_TIME_NAME;
            case HOUR -> NAME.format(start());
            case RANGE -> String.format(Locale.ROOT, "r%06d", index);
        };
    }

    /** The rows with no hour first, then by hour or by place in the plan (a run has one kind of slot). */
    @Override
    public int compareTo(Slot o) {
        if (noTime() || o.noTime()) return Boolean.compare(!noTime(), !o.noTime());
        return Long.compare(index, o.index);
    }

    @Override
    public String toString() {
        return name();
    }
}
