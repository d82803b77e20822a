package io.rebalance.core.source;

import io.rebalance.core.codec.ColumnKind;
import io.rebalance.core.codec.ColumnSpec;
import io.rebalance.core.codec.SourceRow;
import io.rebalance.core.slot.KeyRanges;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.slot.TableKey;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Reads one slot in key order, a page at a time, by keyset: {@code WHERE <slot> AND key > :last ORDER BY key
 * LIMIT n}, the key being one column or, for two, a row with the time part first ({@code (id, tenant_id) > (?, ?)});
 * with key ranges ({@link KeyRanges}) in the key's own order, the range being one of it. Never OFFSET, whose cost
 * grows with the pages already read. Values come as text (see {@link SourceSession}), except scalar bytea which comes
 * as bytes. Rows of key ranges come with their range: read from a range, that one; read by key, the one Postgres
 * finds in the stored ranges.
 */
public final class PageReader {
    private final SourceTable table;
    private final KeyRanges ranges;
    private final String select;
    private final String order;
    private final String after;
    private final String firstPage;
    private final String firstNoTimePage;
    private final String nextNoTimePage;
    private final String nextPage;
    private final String byKeys;
    private final int[] keyIndexes;
    private final boolean[] bytes;

    public PageReader(SourceTable table) {
        this.table = table;
        List<ColumnSpec> cols = table.columns();
        StringBuilder select = new StringBuilder("SELECT ");
        bytes = new boolean[cols.size()];
        TableKey key = table.key();
        this.keyIndexes = new int[key.columns().size()];
        for (int i = 0; i < cols.size(); i++) {
            ColumnSpec col = cols.get(i);
            if (i > 0) select.append(", ");
            select.append(SourceTable.selectExpression(col));
            bytes[i] = !col.array() && col.kind() == ColumnKind.BYTEA;
            int part = key.columns().indexOf(col.name());
            if (part >= 0) keyIndexes[part] = i;
        }
        // The key is selected as text under its own name, and ORDER BY a bare name sorts by the output column of
        // that name: as text, where 10 < 9, while `key > ?` pages by the column's own order, and a bigint slot
        // would skip rows. Qualified, ORDER BY means the column.
        this.ranges = table.keyspace() instanceof KeyRanges r ? r : null;
        String order = " ORDER BY " + (ranges != null ? key.operandOrder("src.") : key.pageOrder("src.")) + " LIMIT ?";
        String after = " AND "
                + (ranges != null ? key.operand("src.", false) + " > " + key.placeholder() : key.pageAfter("src."));
        this.select = select.toString();
        this.order = order;
        this.after = after;
        String from =
                " FROM " + table.name() + " AS src WHERE " + table.keyspace().predicate();
        this.firstPage = select + from + order;
        this.nextPage = select + from + after + order;
        String noTime =
                " FROM " + table.name() + " AS src WHERE " + table.keyspace().noTimePredicate();
        this.firstNoTimePage = select + noTime + order;
        this.nextNoTimePage = select + noTime + after + order;
        this.byKeys = select + (ranges != null && ranges.stored() ? ", " + ranges.slotSql("src.") : "") + " FROM "
                + table.name() + " AS src WHERE " + key.anyOf("src.");
    }

    /** The rows with these keys, in any order, wherever they are; keys without a row are simply absent. */
    public List<SourceRow> byKeys(Connection c, Collection<String> keys) throws SQLException {
        if (ranges != null) ranges.slotSql("src."); // refuses before the ranges are stored
        try (PreparedStatement ps = c.prepareStatement(byKeys)) {
            ps.setArray(1, c.createArrayOf("text", keys.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                return read(rs, keys.size(), null);
            }
        }
    }

    /**
     * @param afterKey the last key already copied (text form), or null to start at the slot's beginning
     * @return up to {@code limit} rows after {@code afterKey}, in key order; fewer means the slot is done
     */
    public List<SourceRow> page(Connection c, Slot slot, String afterKey, int limit) throws SQLException {
        Object[] bounds = table.keyspace().bounds(slot);
        String sql;
        if (ranges != null) { // the range's predicate has one, two or no bounds: the first and last are open
            String from = " FROM " + table.name() + " AS src WHERE " + ranges.predicate(slot);
            sql = select + from + (afterKey == null ? "" : after) + order;
        } else {
            sql = slot.noTime()
                    ? (afterKey == null ? firstNoTimePage : nextNoTimePage)
                    : (afterKey == null ? firstPage : nextPage);
        }
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            int p = 1;
            for (Object bound : bounds) ps.setObject(p++, bound);
            if (afterKey != null)
                p = ranges != null
                        ? table.key().bind(ps, p, afterKey)
                        : table.key().bindPage(ps, p, afterKey);
            ps.setInt(p, limit);
            try (ResultSet rs = ps.executeQuery()) {
                return read(rs, limit, ranges != null ? slot : null);
            }
        }
    }

    private String keyText(Object[] values) {
        if (keyIndexes.length == 1) return (String) values[keyIndexes[0]];
        List<String> parts = new ArrayList<>(keyIndexes.length);
        for (int k : keyIndexes) parts.add((String) values[k]);
        return table.key().text(parts);
    }

    /** @param slot the slot every row is in, or null: then a key range's row has its range as a last column */
    private List<SourceRow> read(ResultSet rs, int expected, Slot slot) throws SQLException {
        List<SourceRow> rows = new ArrayList<>(expected);
        boolean rangeColumn = slot == null && ranges != null;
        while (rs.next()) {
            Object[] values = new Object[bytes.length];
            for (int i = 0; i < bytes.length; i++) {
                values[i] = bytes[i] ? rs.getBytes(i + 1) : rs.getString(i + 1);
            }
            Slot own = rangeColumn ? Slot.range(rs.getInt(bytes.length + 1)) : slot;
            rows.add(new SourceRow(keyText(values), values, own));
        }
        return rows;
    }
}
