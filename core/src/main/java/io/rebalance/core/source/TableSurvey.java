package io.rebalance.core.source;

import io.rebalance.core.codec.ColumnSpec;
import io.rebalance.core.codec.Refusal;
import io.rebalance.core.codec.StorableSql;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.slot.KeyType;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.slot.SlotKeyspace;
import io.rebalance.core.slot.TableKey;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What copying the table would meet, computed in Postgres slot by slot without moving a row (the rules are
 * {@link StorableSql}'s): how many rows, how large their items, the write units their puts consume, and which rows the
 * codec would refuse, why, with the first and last id of each kind. Read only.
 */
public final class TableSurvey {
    /**
     * Rows refused for one reason.
     *
     * @param column the column at fault; null when the whole item is (too large)
     * @param firstId the smallest id among them, as text; {@code lastId} the largest
     */
    public record Refused(Refusal refusal, String column, long rows, String firstId, String lastId) {}

    /**
     * One slot. Bytes and write units count the rows the copy would write ({@code rows} less the refused ones).
     *
     * @param tableUnits the write units their puts consume on the table; {@code indexUnits} on the slot index
     */
    public record SlotSurvey(
            Slot slot,
            long rows,
            long bytes,
            long maxItemBytes,
            long tableUnits,
            long indexUnits,
            List<Refused> refused) {
        public long refusedRows() {
            return refused.stream().mapToLong(Refused::rows).sum();
        }

        public long storedRows() {
            return rows - refusedRows();
        }
    }

    /** A new on-demand table serves up to this many write request units per second at first (AWS documents it). */
    public static final long ON_DEMAND_START_UNITS_PER_SECOND = 4_000;

    /** The slots added up: what the whole copy would write and consume. */
    public record Totals(
            long slots,
            long rows,
            long storedRows,
            long bytes,
            long maxItemBytes,
            long tableUnits,
            long indexUnits,
            List<Refused> refused) {
        public static Totals of(List<SlotSurvey> slots) {
            long rows = 0, stored = 0, bytes = 0, max = 0, table = 0, index = 0;
            Map<List<Object>, Refused> byCause = new LinkedHashMap<>();
            for (SlotSurvey s : slots) {
                rows += s.rows();
                stored += s.storedRows();
                bytes += s.bytes();
                max = Math.max(max, s.maxItemBytes());
                table += s.tableUnits();
                index += s.indexUnits();
                for (Refused r : s.refused()) {
                    byCause.merge(Arrays.asList(r.refusal(), r.column()), r, Totals::merge);
                }
            }
            return new Totals(slots.size(), rows, stored, bytes, max, table, index, List.copyOf(byCause.values()));
        }

        /** Ids are ULIDs, uuids (both of one length) or non-negative bigints: shorter is smaller, then by text. */
        private static final Comparator<String> ID_ORDER =
                Comparator.comparingInt(String::length).thenComparing(Comparator.naturalOrder());

        private static Refused merge(Refused a, Refused b) {
            String first = ID_ORDER.compare(a.firstId(), b.firstId()) <= 0 ? a.firstId() : b.firstId();
            String last = ID_ORDER.compare(a.lastId(), b.lastId()) >= 0 ? a.lastId() : b.lastId();
            return new Refused(a.refusal(), a.column(), a.rows() + b.rows(), first, last);
        }

        public long refusedRows() {
            return refused.stream().mapToLong(Refused::rows).sum();
        }

        public long writeUnits() {
            return tableUnits + indexUnits;
        }

        /** Seconds the copy takes at {@code rowsPerSecond} (its rate limit). */
        public double secondsAtRows(long rowsPerSecond) {
            return (double) storedRows / rowsPerSecond;
        }

        /** Seconds at a new on-demand table's first limit; the table and its index each have that much. */
        public double secondsAtOnDemandStart() {
            return (double) Math.max(tableUnits, indexUnits) / ON_DEMAND_START_UNITS_PER_SECOND;
        }
    }

    private final SourceTable table;
    private final StorableSql storable;
    private final String bySlot;
    private final String bySlotEnd;

    public TableSurvey(SourceTable table, MigrationConfig.Target target) {
        this.table = table;
        List<String> names = new ArrayList<>();
        for (ColumnSpec col : table.columns()) {
            names.add(table.key().attributeOf(col.name()));
        }
        SlotIndex index = SlotIndex.of(target);
        long slotBytes = utf8(index.attribute()) + utf8(index.value(Slot.parse("20241020.02"), "0"));
        this.storable = new StorableSql(table.columns(), names, target.forms(), slotBytes);
        this.bySlot = "SELECT r.reason, count(*), " + idRange("r.k") + ","
                + " coalesce(sum(r.bytes) FILTER (WHERE r.reason IS NULL), 0)::int8,"
                + " coalesce(max(r.bytes) FILTER (WHERE r.reason IS NULL), 0)::int8,"
                + " coalesce(sum(" + StorableSql.tableUnits("r.bytes") + ") FILTER (WHERE r.reason IS NULL), 0)::int8,"
                + " coalesce(sum(" + StorableSql.indexUnits("r.bytes") + ") FILTER (WHERE r.reason IS NULL), 0)::int8"
                + " FROM (SELECT " + keyValue(table.key()) + " AS k, " + StorableSql.SIZE
                + " AS bytes, " + storable.refusal() + " AS reason"
                + " FROM " + table.name() + " AS src CROSS JOIN LATERAL (SELECT " + storable.itemSize()
                + " AS rebalance_item_bytes) s WHERE ";
        this.bySlotEnd = ") r GROUP BY r.reason";
    }

    /**
     * Surveys one slot: one query, one index range scan of the key (or of the time column).
     *
     * @param c a session {@link #tune}d once
     */
    public SlotSurvey slot(Connection c, Slot slot) throws SQLException {
        Object[] bounds = table.keyspace().bounds(slot);
        String sql = bySlot + table.keyspace().predicate(slot) + bySlotEnd;
        long rows = 0, bytes = 0, max = 0, table = 0, index = 0;
        List<Refused> refused = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < bounds.length; i++) ps.setObject(i + 1, bounds[i]);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    int reason = rs.getInt(1);
                    boolean stored = rs.wasNull();
                    long n = rs.getLong(2);
                    rows += n;
                    if (stored) {
                        bytes = rs.getLong(5);
                        max = rs.getLong(6);
                        table = rs.getLong(7);
                        index = rs.getLong(8);
                    } else {
                        StorableSql.Cause cause = storable.causes().get(reason - 1);
                        refused.add(new Refused(cause.refusal(), cause.column(), n, rs.getString(3), rs.getString(4)));
                    }
                }
            }
        }
        return new SlotSurvey(slot, rows, bytes, max, table, index, List.copyOf(refused));
    }

    /**
     * Readies a session for {@link #slot}: JIT off. The planner prices the per-row json walks high enough to
     * JIT-compile each slot's query, which then takes about 1.7 s to compile and 20 ms to run (measured on a 500-row
     * slot).
     */
    public static void tune(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute("SET jit = off");
        }
    }

    /** The key as the survey ranges it: a bigint as itself, compared as a number; any other key as its text. */
    private static String keyValue(TableKey key) {
        return !key.composite() && key.timeType() == KeyType.BIGINT
                ? "src." + SlotKeyspace.quote(key.timeColumn())
                : key.selectText("src.");
    }

    /** The smallest and largest key as text; bigints compared as numbers, not as their text. */
    private String idRange(String key) {
        return !table.key().composite() && table.key().timeType() == KeyType.BIGINT
                ? "min(" + key + ")::text, max(" + key + ")::text"
                : "min(" + key + "::text), max(" + key + "::text)";
    }

    private static long utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
    }
}
