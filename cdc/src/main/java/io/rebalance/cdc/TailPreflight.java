package io.rebalance.cdc;

import io.rebalance.core.ErrorCode;
import io.rebalance.core.RebalanceException;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.source.SourceTable;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * What the change stream needs from Postgres, checked before anything is created, each failure with its own exit
 * code and the command that fixes it: logical WAL, a role that may replicate, a key every change (deletes too)
 * carries in the WAL, and a replication slot no other process is reading.
 */
public final class TailPreflight {
    /** The source table as Debezium names it: schema and table, unquoted. */
    public record TableId(String schema, String table) {
        public String dotted() {
            return schema + "." + table;
        }
    }

    /**
     * The replication slot as Postgres reports it, or null fields when it does not exist.
     *
     * @param walStatus {@code reserved}, {@code extended}, {@code unreserved} or {@code lost}; null when absent
     */
    public record SlotInfo(
            boolean exists, String plugin, String database, boolean active, Integer activePid, String walStatus) {
        /** Postgres invalidated it (it fell more than {@code max_slot_wal_keep_size} behind): its WAL is gone. */
        public boolean lost() {
            return "lost".equals(walStatus);
        }
    }

    private TailPreflight() {}

    public static TableId check(Connection c, SourceTable table, MigrationConfig config) throws SQLException {
        walLevel(c);
        role(c, config.source().user());
        return key(c, table);
    }

    static void walLevel(Connection c) throws SQLException {
        String level = one(c, "SHOW wal_level");
        if (!"logical".equals(level)) {
            throw new RebalanceException(
                    ErrorCode.WAL_LEVEL,
                    "Postgres has wal_level=" + level + "; the tail reads logical replication and needs"
                            + " wal_level=logical: run ALTER SYSTEM SET wal_level = logical as a superuser and restart"
                            + " Postgres (scripts/services.sh does both)");
        }
    }

    static void role(Connection c, String user) throws SQLException {
        String can = one(c, "SELECT (rolreplication OR rolsuper)::text FROM pg_roles WHERE rolname = current_user");
        if (!"true".equals(can)) {
            throw new RebalanceException(
                    ErrorCode.REPLICATION_ROLE,
                    "Postgres role '" + user + "' may not replicate (no REPLICATION attribute); run ALTER ROLE \""
                            + user + "\" REPLICATION as a superuser, or set source.user to a role that has it");
        }
    }

    static TableId key(Connection c, SourceTable table) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT n.nspname, cl.relname, cl.relreplident,"
                + " (SELECT array_agg(a.attname::text ORDER BY a.attnum) FROM pg_index i JOIN pg_attribute a"
                + "   ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)"
                + "   WHERE i.indrelid = cl.oid AND i.indisprimary),"
                + " (SELECT array_agg(a.attname::text ORDER BY a.attnum) FROM pg_index i JOIN pg_attribute a"
                + "   ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)"
                + "   WHERE i.indrelid = cl.oid AND i.indisreplident)"
                + " FROM pg_class cl JOIN pg_namespace n ON n.oid = cl.relnamespace WHERE cl.oid = ?::regclass")) {
            ps.setString(1, table.name());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                TableId id = new TableId(rs.getString(1), rs.getString(2));
                String identity = rs.getString(3);
                List<String> pk = list(rs.getArray(4));
                List<String> identityIndex = list(rs.getArray(5));
                List<String> carried =
                        switch (identity) {
                            case "d" -> pk;
                            case "i" -> identityIndex;
                            case "f" -> List.of(table.keyColumn());
                            default -> List.of();
                        };
                if (!carried.equals(List.of(table.keyColumn()))) {
                    String found = identity.equals("n")
                            ? "REPLICA IDENTITY NOTHING"
                            : carried.isEmpty() ? "no primary key" : "a WAL key of " + carried;
                    throw new RebalanceException(
                            ErrorCode.SOURCE_NO_PRIMARY_KEY,
                            "source table " + table.name() + " has " + found + ", so its updates and deletes do not"
                                    + " name rows by " + table.keyColumn() + " in the WAL; make " + table.keyColumn()
                                    + " the primary key, or run ALTER TABLE " + table.name()
                                    + " REPLICA IDENTITY USING INDEX <a unique index on " + table.keyColumn() + ">");
                }
                return id;
            }
        }
    }

    public static SlotInfo slot(Connection c, String slotName) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT plugin, database, active, active_pid, wal_status FROM pg_replication_slots WHERE slot_name = ?")) {
            ps.setString(1, slotName);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) return new SlotInfo(false, null, null, false, null, null);
                return new SlotInfo(
                        true,
                        rs.getString(1),
                        rs.getString(2),
                        rs.getBoolean(3),
                        (Integer) rs.getObject(4),
                        rs.getString(5));
            }
        }
    }

    /** Refuses a slot another process reads, or one made for another plugin or database. */
    static void slotUsable(Connection c, String slotName) throws SQLException {
        SlotInfo s = slot(c, slotName);
        if (!s.exists()) {
            roomForASlot(c, slotName);
            return;
        }
        if (!"pgoutput".equals(s.plugin()) || !c.getCatalog().equals(s.database())) {
            throw new RebalanceException(
                    ErrorCode.REPLICATION_SLOT_BUSY,
                    "replication slot '" + slotName + "' exists for plugin " + s.plugin() + " in database "
                            + s.database() + "; the tail needs pgoutput in " + c.getCatalog() + ": set tail.slotName to"
                            + " another name, or drop that slot if nothing uses it");
        }
        if (s.active()) {
            throw new RebalanceException(
                    ErrorCode.REPLICATION_SLOT_BUSY,
                    "replication slot '" + slotName + "' is being read by another process (pid " + s.activePid()
                            + ") that is not a rebalance tail holding the lease; stop it, or set tail.slotName to"
                            + " another name");
        }
    }

    /** Debezium would otherwise fail to create the slot, again at every restart, with a server error. */
    private static void roomForASlot(Connection c, String slotName) throws SQLException {
        int max = Integer.parseInt(one(c, "SELECT current_setting('max_replication_slots')"));
        int used = Integer.parseInt(one(c, "SELECT count(*) FROM pg_replication_slots"));
        if (used < max) return;
        throw new RebalanceException(
                ErrorCode.NO_FREE_REPLICATION_SLOT,
                "the tail must create replication slot '" + slotName + "', but all " + max + " replication slots"
                        + " Postgres allows (max_replication_slots) are taken: drop one nothing reads (see"
                        + " pg_replication_slots), or raise max_replication_slots and restart Postgres");
    }

    private static String one(Connection c, String sql) throws SQLException {
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(sql)) {
            return rs.next() ? rs.getString(1) : null;
        }
    }

    private static List<String> list(java.sql.Array a) throws SQLException {
        if (a == null) return List.of();
        List<String> out = new ArrayList<>();
        for (Object o : (Object[]) a.getArray()) out.add((String) o);
        return out;
    }
}
