package io.rebalance.core.slot;

import io.rebalance.core.config.IdFormat;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.protocol.KeyText;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Optional;
import java.util.UUID;

/**
 * How rows map to slots, as SQL: the predicate that selects a slot's rows and its bounds as JDBC parameters.
 *
 * <p>For time-ordered ids the bounds are ids (the smallest id of the slot's first and of the next slot's first
 * millisecond), so a slot is one index range scan on the primary key. For a timestamp column the bounds are
 * instants on that column, which then needs an index of its own.
 */
public sealed interface SlotKeyspace permits SlotKeyspace.Hours, KeyRanges {

    /** SQL selecting an hour's rows, with two {@code ?} for {@link #bounds(Slot)}: lower inclusive, upper exclusive. */
    String predicate();

    /**
     * SQL selecting {@code slot}'s rows, with one {@code ?} for each of {@link #bounds(Slot)}: {@link #predicate()}
     * for an hour, {@link #noTimePredicate()} (no parameter) for {@link Slot#NO_TIME}.
     */
    default String predicate(Slot slot) {
        return slot.noTime() ? noTimePredicate() : predicate();
    }

    /** SQL selecting the rows that have no hour: none, but where slots come from a time column. */
    default String noTimePredicate() {
        return "false";
    }

    /** The values for {@link #predicate(Slot)}'s parameters: none for {@link Slot#NO_TIME}. */
    default Object[] bounds(Slot slot) {
        return slot.noTime() ? new Object[0] : hourBounds(slot);
    }

    /** The lower and upper bound of an hour's rows. */
    Object[] hourBounds(Slot slot);

    /**
     * The SQL type {@link #hourBounds} compare as ({@code text}, {@code uuid}, {@code int8}, {@code timestamptz}): a
     * bound's {@code toString()} cast to it is the bound, so many bounds travel as one text array.
     */
    String boundType();

    /**
     * Whether a key names its slot by itself (the time inside an id). A row slotted by a time column moves between
     * hours when that column changes, and a key range is known to Postgres (the key's collation orders it), not from
     * the key's text: a change of those counts for every slot.
     */
    default boolean keyNamesSlot() {
        return true;
    }

    /** How many columns the row key has; the time is in the last. */
    default int keyParts() {
        return 1;
    }

    /**
     * SQL giving the slot of a row as text {@link #rowSlot} reads.
     *
     * @param qualifier what names the row's table in the query, with its dot ({@code public.room_events.})
     */
    String rowSlotSql(String qualifier);

    /** The slot of a row whose {@link #rowSlotSql} gave {@code text}. */
    Slot rowSlot(String text);

    /**
     * The slot a row key names by itself (the time inside an id), or empty where it names none: a row slotted by a
     * time column moves between hours, and a key range is Postgres' to tell.
     */
    default Optional<Slot> slotOfKey(String keyText) {
        return Optional.empty();
    }

    /** The quoted column the predicate bounds. */
    String column();

    /**
     * Refuses a range whose bounds this keyspace cannot express (a bigint layout whose timestamp would overflow
     * into the sign bit would otherwise produce wrapped bounds and silently skip rows).
     *
     * @throws IllegalArgumentException saying what to change
     */
    default void checkRange(SlotRange range) {}

    /**
     * Builds the keyspace for the configured mapping and the key's actual type.
     *
     * @param timeColumn the key column that holds the time (the last of the key's {@code keyParts} columns)
     */
    static Hours of(MigrationConfig config, String timeColumn, KeyType keyType, int keyParts) {
        var slots = config.slots();
        String key = quote(timeColumn);
        if (slots.fromColumn()) return new TimeColumn(quote(slots.timeColumn()));
        boolean snowflake = slots.idFormat() == IdFormat.SNOWFLAKE
                || (slots.idFormat() == IdFormat.AUTO && keyType == KeyType.BIGINT);
        if (snowflake) return new SnowflakeIds(key, slots.snowflake(), keyParts);
        return keyType == KeyType.UUID ? new UlidUuids(key, keyParts) : new UlidTexts(key, keyParts);
    }

    public static String quote(String identifier) {
        return "\"" + identifier.replace("\"", "\"\"") + "\"";
    }

    /**
     * Slots that are hours: every keyspace whose rows tell time (from the key, or a time column), so the run's range
     * and a row's slot come from instants.
     */
    sealed interface Hours extends SlotKeyspace
            permits SlotKeyspace.UlidTexts, SlotKeyspace.UlidUuids, SlotKeyspace.SnowflakeIds, SlotKeyspace.TimeColumn {

        /**
         * SQL giving the oldest and newest time source of {@code table} as two text columns (NULL when empty); used for
         * the run's range when it is not configured. It takes min and max of a column so the index answers it.
         */
        default String minMaxQuery(String table) {
            // ORDER BY ... LIMIT 1, not min(): Postgres has no min(uuid), and the btree answers both the same way. The
            // column is qualified: a bare name would order by the text output column of that name ("10" < "9").
            return "SELECT (SELECT " + column() + "::text FROM " + table + " AS src ORDER BY src." + column()
                    + " LIMIT 1), (SELECT " + column() + "::text FROM " + table + " AS src ORDER BY src." + column()
                    + " DESC LIMIT 1)";
        }

        /** SQL true for the rows that have an hour: every row, but where slots come from a time column. */
        default String hourRowsWhere() {
            return "true";
        }

        /**
         * SQL giving the {@code n} rows with an hour at one end of the table, as the key's text and the text {@link
         * #instantOf} reads: the oldest first, or with {@code newest} the newest first.
         */
        default String extremesQuery(String table, String quotedKey, boolean newest, int n) {
            // qualified, as in minMaxQuery: the key's text is an output column of the same name
            return "SELECT " + quotedKey + "::text, " + instantSql() + " FROM " + table + " AS src WHERE "
                    + hourRowsWhere() + " ORDER BY src." + column() + (newest ? " DESC" : "") + " LIMIT " + n;
        }

        /** The instant a value of {@link #minMaxQuery(String)} stands for. */
        Instant instantOf(String text);

        /**
         * The instant of a row key given as its text ({@link io.rebalance.protocol.KeyText}): for slots from ids, the
         * instant of the key part that holds the time. Not for slots from a time column, whose keys hold none.
         */
        default Instant instantOfKey(String keyText) {
            int parts = keyParts();
            return instantOf(
                    parts == 1 ? keyText : KeyText.parts(keyText, parts).get(parts - 1));
        }

        /**
         * SQL giving a row's instant as text {@link #instantOf} reads: its key, or its time column in epoch milliseconds
         * (NULL when that column is).
         */
        default String instantSql() {
            return column() + "::text";
        }

        @Override
        default String rowSlotSql(String qualifier) {
            return instantSql();
        }

        /** NULL is the rows with no hour. */
        @Override
        default Slot rowSlot(String text) {
            return text == null ? Slot.NO_TIME : Slot.containing(instantOf(text));
        }

        @Override
        default Optional<Slot> slotOfKey(String keyText) {
            return keyNamesSlot() ? Optional.of(Slot.containing(instantOfKey(keyText))) : Optional.empty();
        }
    }

    /** ULIDs stored as 26-character text; text order equals time order because all ULIDs have the same length. */
    record UlidTexts(String column, int keyParts) implements Hours {
        public UlidTexts(String column) {
            this(column, 1);
        }

        public String predicate() {
            return column + " >= ? AND " + column + " < ?";
        }

        public Object[] hourBounds(Slot slot) {
            return new Object[] {
                Ulid.lowest(slot.start().toEpochMilli()), Ulid.lowest(slot.end().toEpochMilli())
            };
        }

        public String boundType() {
            return "text";
        }

        public Instant instantOf(String text) {
            return Instant.ofEpochMilli(Ulid.millis(text));
        }
    }

    /** ULIDs stored as uuid: the first 48 bits are the millisecond; Postgres compares uuids bytewise. */
    record UlidUuids(String column, int keyParts) implements Hours {
        public UlidUuids(String column) {
            this(column, 1);
        }

        public String predicate() {
            return column + " >= ? AND " + column + " < ?";
        }

        public Object[] hourBounds(Slot slot) {
            return new Object[] {lowest(slot.start()), lowest(slot.end())};
        }

        public String boundType() {
            return "uuid";
        }

        private static UUID lowest(Instant t) {
            return new UUID(t.toEpochMilli() << 16, 0L);
        }

        public Instant instantOf(String text) {
            return Instant.ofEpochMilli(UUID.fromString(text).getMostSignificantBits() >>> 16);
        }
    }

    /** Time-ordered bigints: {@code (ms - epoch) << (shardBits + sequenceBits) | shard | sequence}. */
    record SnowflakeIds(String column, MigrationConfig.Snowflake layout, int keyParts) implements Hours {
        public SnowflakeIds(String column, MigrationConfig.Snowflake layout) {
            this(column, layout, 1);
        }

        public String predicate() {
            return column + " >= ? AND " + column + " < ?";
        }

        public Object[] hourBounds(Slot slot) {
            return new Object[] {lowest(slot.start()), lowest(slot.end())};
        }

        public String boundType() {
            return "int8";
        }

        private long lowest(Instant t) {
            long ms = Math.max(0, t.toEpochMilli() - layout.epochMillis());
            return ms << layout.shift();
        }

        @Override
        public void checkRange(SlotRange range) {
            long first = range.oldest().start().toEpochMilli() - layout.epochMillis();
            long last = range.newest().end().toEpochMilli() - layout.epochMillis();
            if (first < 0 || (last >>> (63 - layout.shift())) != 0) {
                throw new IllegalArgumentException("slots " + range.oldest() + ".." + range.newest()
                        + " do not fit the id"
                        + " layout: with slots.snowflake.epochMillis=" + layout.epochMillis() + " and " + layout.shift()
                        + " bits below the timestamp, ids of those hours would overflow a bigint; set epochMillis to the"
                        + " epoch your ids count from");
            }
        }

        public Instant instantOf(String text) {
            return Instant.ofEpochMilli((Long.parseLong(text) >>> layout.shift()) + layout.epochMillis());
        }
    }

    /** Rows placed by a timestamp column; the key still orders rows within the slot. */
    record TimeColumn(String column) implements Hours {
        public String predicate() {
            return column + " >= ? AND " + column + " < ?";
        }

        public Object[] hourBounds(Slot slot) {
            // timestamptz parameters; against a timestamp column Postgres converts in the session zone, pinned to UTC
            return new Object[] {
                OffsetDateTime.ofInstant(slot.start(), ZoneOffset.UTC),
                OffsetDateTime.ofInstant(slot.end(), ZoneOffset.UTC)
            };
        }

        public String boundType() {
            return "timestamptz";
        }

        @Override
        public String minMaxQuery(String table) {
            // infinities hold no hour (their rows are the notime slot's, Slot.NO_TIME)
            return "SELECT (extract(epoch FROM min(" + column + ")) * 1000)::int8::text," + " (extract(epoch FROM max("
                    + column + ")) * 1000)::int8::text FROM " + table + " WHERE " + column + " > '-infinity' AND "
                    + column + " < 'infinity'";
        }

        @Override
        public boolean keyNamesSlot() {
            return false;
        }

        @Override
        public String hourRowsWhere() {
            return column + " > '-infinity' AND " + column + " < 'infinity'";
        }

        /** NULL and the infinities are no hour: their rows are the {@link Slot#NO_TIME} slot's. */
        @Override
        public String noTimePredicate() {
            return "(" + column + " IS NULL OR " + column + " = 'infinity' OR " + column + " = '-infinity')";
        }

        @Override
        public String instantSql() {
            // floor, not the cast's rounding: 10:59:59.9996 is in the 10 o'clock slot; no instant for no hour
            return "CASE WHEN " + column + " IN ('infinity', '-infinity') THEN NULL ELSE (floor(extract(epoch FROM "
                    + column + ") * 1000))::int8::text END";
        }

        public Instant instantOf(String epochMillis) {
            return Instant.ofEpochMilli(Long.parseLong(epochMillis));
        }
    }
}
