package io.rebalance.cdc.reverse;

import io.rebalance.core.codec.ColumnSpec;
import io.rebalance.core.codec.RowDecoder;
import io.rebalance.core.slot.SlotKeyspace;
import io.rebalance.core.source.SourceTable;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.util.Collection;
import java.util.List;

/**
 * Writes rows decoded from DynamoDB items back into the source table, in the caller's transaction: an upsert of the
 * copied columns (others keep their values) and a delete by key. The upsert's conflict target is the table's unique
 * key: the key's columns, or on a partitioned table those and the partition key. Values are bound untyped ({@link Types#OTHER}), so
 * Postgres parses each text with the column's own input function: no Java type sits between the item and the row.
 */
final class RowWriteBack {
    private final String upsert;
    private final String delete;
    private final String deleteElsewhere;
    private final int[] elsewhere;
    private final int columns;

    RowWriteBack(SourceTable table) {
        List<ColumnSpec> cols = table.columns();
        List<String> names = cols.stream().map(ColumnSpec::name).toList();
        List<String> unique = table.uniqueKey();
        if (!names.containsAll(unique)) {
            throw new RebalanceException(
                    ErrorCode.CONFIG_INVALID,
                    "source.columns leaves out some of " + unique + ", the unique key of " + table.name() + " (the key"
                            + " and the partition key): the reverse stream writes rows back by it; add them");
        }
        this.columns = cols.size();
        StringBuilder params = new StringBuilder();
        StringBuilder sets = new StringBuilder();
        for (String name : names) {
            params.append(params.length() == 0 ? "?" : ", ?");
            if (unique.contains(name)) continue;
            String q = SlotKeyspace.quote(name);
            sets.append(sets.length() == 0 ? "" : ", ")
                    .append(q)
                    .append(" = EXCLUDED.")
                    .append(q);
        }
        List<String> keyColumns = table.key().columns();
        this.upsert = "INSERT INTO " + table.name() + " (" + quoted(names) + ") VALUES (" + params + ") ON CONFLICT ("
                + quoted(unique) + ") " + (sets.length() == 0 ? "DO NOTHING" : "DO UPDATE SET " + sets);
        // On a partitioned table the unique key holds the partition key: a row whose partition key changed in DynamoDB
        // is inserted anew, and its old version, elsewhere, goes (one row per key, as DynamoDB has one item).
        this.elsewhere = unique.stream().mapToInt(names::indexOf).toArray();
        List<String> partitionKey = unique.subList(keyColumns.size(), unique.size());
        String keyEquals = String.join(
                " AND ",
                keyColumns.stream().map(k -> SlotKeyspace.quote(k) + " = ?").toList());
        this.deleteElsewhere = partitionKey.isEmpty()
                ? null
                : "DELETE FROM " + table.name() + " WHERE " + keyEquals + " AND (" + quoted(partitionKey)
                        + ") IS DISTINCT FROM (" + "?, ".repeat(partitionKey.size() - 1) + "?)";
        this.delete = "DELETE FROM " + table.name() + " WHERE " + table.key().anyOf("");
    }

    private static String quoted(List<String> names) {
        return String.join(", ", names.stream().map(SlotKeyspace::quote).toList());
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
        if (deleteElsewhere == null) return;
        try (PreparedStatement ps = c.prepareStatement(deleteElsewhere)) {
            for (String[] row : rows) {
                for (int u = 0; u < elsewhere.length; u++) ps.setObject(u + 1, row[elsewhere[u]], Types.OTHER);
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    /**
     * Has Postgres plan every statement this writes with, without running one (EXPLAIN): a column it may not write
     * (generated, identity ALWAYS), a missing privilege or anything else the rewriter or the permission check refuses
     * fails here as it would fail the reverse stream after the flip. Nothing is written.
     */
    void explain(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("EXPLAIN " + upsert)) {
            for (int i = 0; i < columns; i++) ps.setNull(i + 1, Types.OTHER);
            ps.executeQuery().close();
        }
        try (PreparedStatement ps = c.prepareStatement("EXPLAIN " + delete)) {
            ps.setArray(1, c.createArrayOf("text", new Object[0]));
            ps.executeQuery().close();
        }
        if (deleteElsewhere == null) return;
        try (PreparedStatement ps = c.prepareStatement("EXPLAIN " + deleteElsewhere)) {
            for (int u = 0; u < elsewhere.length; u++) ps.setNull(u + 1, Types.OTHER);
            ps.executeQuery().close();
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
