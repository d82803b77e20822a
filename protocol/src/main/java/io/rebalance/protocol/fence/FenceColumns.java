package io.rebalance.protocol.fence;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** The fence table's columns added since its first version, and which a table has. */
final class FenceColumns {
    private FenceColumns() {}

    /**
     * Adds the columns a table created by an earlier version lacks; ALTER TABLE only for those missing, as it takes
     * the table's ACCESS EXCLUSIVE lock even when there is nothing to add, and guarded writes read the table.
     */
    static void addMissing(Connection c, Statement s, String table) throws SQLException {
        Set<String> has = of(c, table);
        List<String> missing = new ArrayList<>();
        if (!has.contains("route")) missing.add("ADD COLUMN route text NOT NULL DEFAULT 'SOURCE'");
        if (!has.contains("epoch")) missing.add("ADD COLUMN epoch bigint NOT NULL DEFAULT 1");
        if (!has.contains("closed_lsn")) missing.add("ADD COLUMN closed_lsn pg_lsn");
        for (String text : List.of(PostgresFence.COPY_RECORD, FenceTrigger.GUARDED, PartFenceTrigger.PARTS)) {
            if (!has.contains(text)) missing.add("ADD COLUMN " + text + " text");
        }
        if (!missing.isEmpty()) s.execute("ALTER TABLE " + table + " " + String.join(", ", missing));
    }

    /** The fence table's columns, in one query; none when it does not exist. */
    static Set<String> of(Connection c, String table) throws SQLException {
        Set<String> out = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass(?) AND attnum > 0 AND NOT attisdropped")) {
            ps.setString(1, table);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) out.add(rs.getString(1));
            }
        }
        return out;
    }
}
