package io.rebalance.core.source;

import io.rebalance.core.config.ConfigLoader;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/** The database's own tables nearest a name that does not exist, for the message that refuses it. */
final class NearTables {
    /** Tables named in the message at most. */
    static final int NAMED = 5;

    private NearTables() {}

    /** @return up to {@link #NAMED} tables and partitioned tables outside the system schemas, nearest first */
    static List<String> to(Connection c, String missing) throws SQLException {
        List<String> all = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT n.nspname || '.' || c.relname FROM pg_class c"
                + " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'p')"
                + " AND NOT c.relispartition AND n.nspname NOT IN ('pg_catalog', 'information_schema')"
                + " AND n.nspname NOT LIKE 'pg_toast%'")) {
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) all.add(rs.getString(1));
            }
        }
        String wanted = missing.toLowerCase(Locale.ROOT);
        String bare = wanted.substring(wanted.indexOf('.') + 1);
        return all.stream()
                .sorted(Comparator.comparingInt((String t) -> Math.min(
                                ConfigLoader.editDistance(t.toLowerCase(Locale.ROOT), wanted),
                                ConfigLoader.editDistance(
                                        t.substring(t.indexOf('.') + 1).toLowerCase(Locale.ROOT), bare)))
                        .thenComparing(Comparator.naturalOrder()))
                .limit(NAMED)
                .toList();
    }
}
