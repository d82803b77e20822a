package io.rebalance.cdc;

import io.rebalance.core.codec.ColumnSpec;
import io.rebalance.core.codec.RowDecoder;
import io.rebalance.core.slot.SlotKeyspace;
import io.rebalance.core.source.SourceTable;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.util.Collection;
import java.util.List;

/**
 * Writes rows decoded from DynamoDB items back into the source table, in the caller's transaction: an upsert of the
 * copied columns (others keep their values) and a delete by key. Values are bound untyped ({@link Types#OTHER}), so
 * Postgres parses each text with the column's own input function: no Java type sits between the item and the row.
 */
final class RowWriteBack {
    private final String upsert;
    private final String delete;
    private final int columns;

    RowWriteBack(SourceTable table) {
        List<ColumnSpec> cols = table.columns();
        this.columns = cols.size();
        StringBuilder names = new StringBuilder();
        StringBuilder params = new StringBuilder();
        StringBuilder sets = new StringBuilder();
        for (ColumnSpec col : cols) {
            String q = SlotKeyspace.quote(col.name());
            if (names.length() > 0) {
                names.append(", ");
                params.append(", ");
            }
            names.append(q);
            params.append('?');
            if (!col.name().equals(table.keyColumn())) {
                if (sets.length() > 0) sets.append(", ");
                sets.append(q).append(" = EXCLUDED.").append(q);
            }
        }
        String key = SlotKeyspace.quote(table.keyColumn());
        this.upsert = "INSERT INTO " + table.name() + " (" + names + ") VALUES (" + params + ") ON CONFLICT (" + key
                + ") " + (sets.length() == 0 ? "DO NOTHING" : "DO UPDATE SET " + sets);
        this.delete = "DELETE FROM " + table.name() + " WHERE " + key + " = ANY(CAST(? AS "
                + table.keyType().sqlArrayType() + "))";
    }

    /** @param rows each as {@link RowDecoder#decode} returns it */
    void upsert(Connection c, Collection<String[]> rows) throws SQLException {
        if (rows.isEmpty()) return;
        try (PreparedStatement ps = c.prepareStatement(upsert)) {
            for (String[] row : rows) {
                for (int i = 0; i < columns; i++) {
                    if (row[i] == null) ps.setNull(i + 1, Types.OTHER);
                    else ps.setObject(i + 1, row[i], Types.OTHER);
                }
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    void delete(Connection c, Collection<String> keys) throws SQLException {
        if (keys.isEmpty()) return;
        try (PreparedStatement ps = c.prepareStatement(delete)) {
            ps.setArray(1, c.createArrayOf("text", keys.toArray()));
            ps.executeUpdate();
        }
    }
}
