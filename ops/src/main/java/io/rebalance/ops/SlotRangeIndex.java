package io.rebalance.ops;

import io.rebalance.core.Finding;
import io.rebalance.core.source.SourceTable;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Whether an index serves a slot's range: every query of a slot (the copy's pages, the verifier's fingerprints,
 * {@code check}'s survey) selects a range of the column the slots come from, so without an index leading with it
 * each of them reads the whole table. One-column time-ordered keys have it in their primary key; a two-column key's
 * second column and a time column need an index of their own.
 */
final class SlotRangeIndex {
    private SlotRangeIndex() {}

    static Finding finding(Connection c, SourceTable table) throws SQLException {
        String column = table.keyspace().column(); // quoted
        try (PreparedStatement ps = c.prepareStatement("SELECT i.indexrelid::regclass::text FROM pg_index i JOIN"
                + " pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0] JOIN pg_class k ON k.oid ="
                + " i.indexrelid JOIN pg_am am ON am.oid = k.relam WHERE i.indrelid = ?::regclass AND i.indisvalid"
                + " AND i.indpred IS NULL AND am.amname = 'btree'"
                + " AND '\"' || replace(a.attname, '\"', '\"\"') || '\"' = ? LIMIT 1")) { // quoted as column() is
            ps.setString(1, table.name());
            ps.setString(2, column);
            try (ResultSet rs = ps.executeQuery()) {
                if (rs.next()) {
                    return Finding.ok("slot ranges", "each slot is a range scan of index " + rs.getString(1));
                }
            }
        }
        return Finding.warning(
                "slot ranges",
                "no index of " + table.name() + " starts with " + column + ", the column slots are ranges of: every"
                        + " slot's queries (copy, verify, check) read the whole table; CREATE INDEX CONCURRENTLY ON "
                        + table.name() + " (" + column + ") first");
    }
}
