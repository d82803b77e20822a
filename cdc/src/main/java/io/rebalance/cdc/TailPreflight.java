package io.rebalance.cdc;

import io.rebalance.core.Finding;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.source.SourceTable;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.sql.Array;
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
    /**
     * The source table as Debezium names it: schema and table, unquoted.
     *
     * @param partitioned the parent of declarative partitions, whose changes the publication publishes as its own
     */
    public record TableId(String schema, String table, boolean partitioned) {
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
        TableId id = key(c, table);
        Finding publication = publication(c, table.name(), config.tail().publication());
        if (publication.level() == Finding.Level.BLOCKING) {
            throw new RebalanceException(ErrorCode.NO_CHANGE_STREAM, publication.detail());
        }
        return id;
    }

    /**
     * Everything the tail needs of Postgres, each as a finding rather than a refusal, for {@code rebalance check}:
     * wal_level, the replication right, the key changes name rows by, the replication slot, how much WAL a stopped
     * tail may hold back, and the publication (for a partitioned table, one that publishes through its root).
     */
    public static List<Finding> findings(Connection c, SourceTable table, MigrationConfig config) throws SQLException {
        List<Finding> out = new ArrayList<>();
        out.add(finding("wal_level", () -> walLevel(c), "logical"));
        out.add(finding(
                "replication right",
                () -> role(c, config.source().user()),
                "role may replicate (REPLICATION, or rds_replication on RDS)"));
        out.add(finding(
                "replica identity",
                () -> key(c, table),
                "updates and deletes name rows by " + table.key().describe() + " in the WAL"));
        out.add(slotFinding(c, config.tail().slotName()));
        out.add(walRetention(c));
        out.add(publication(c, table.name(), config.tail().publication()));
        return out;
    }

    private interface Check {
        void run() throws SQLException;
    }

    private static Finding finding(String name, Check check, String ok) throws SQLException {
        try {
            check.run();
            return Finding.ok(name, ok);
        } catch (RebalanceException e) {
            return Finding.blocking(name, e);
        }
    }

    private static Finding slotFinding(Connection c, String slotName) throws SQLException {
        SlotInfo s = slot(c, slotName);
        if (s.lost()) {
            return Finding.blocking(
                    "replication slot",
                    "replication slot '" + slotName + "' was invalidated by Postgres (it fell more than"
                            + " max_slot_wal_keep_size behind): the changes since are gone; see docs/cdc.md (slot lost)"
                            + " (exit " + ErrorCode.TAIL_SLOT_LOST.exitCode() + ")");
        }
        if (s.exists() && s.active()) {
            // Possibly this run's own tail: the tail itself tells it apart by its lease.
            return Finding.ok(
                    "replication slot",
                    "'" + slotName + "' exists and is being read (pid " + s.activePid()
                            + "): a running tail of this run, or `rebalance tail` refuses it");
        }
        return finding(
                "replication slot",
                () -> slotUsable(c, slotName),
                s.exists() ? "'" + slotName + "' exists, free" : "'" + slotName + "' will be created by the tail");
    }

    /**
     * A stopped tail keeps its slot's WAL on the source's disk. Unbounded, that disk can fill and stop the database;
     * bounded, Postgres drops the slot instead and the tail must start over (docs/cdc.md).
     */
    static Finding walRetention(Connection c) throws SQLException {
        String keep = one(c, "SHOW max_slot_wal_keep_size");
        if (keep == null || keep.equals("-1")) {
            return Finding.warning(
                    "WAL retention",
                    "max_slot_wal_keep_size is unlimited: while the tail is stopped, Postgres keeps all WAL since its"
                            + " position and the disk can fill; set it (ALTER SYSTEM SET max_slot_wal_keep_size ="
                            + " '100GB', then SELECT pg_reload_conf()) above what days of writes produce, and watch"
                            + " `rebalance status` (tail.retentionWarnMb)");
        }
        return Finding.ok(
                "WAL retention",
                "max_slot_wal_keep_size = " + keep + ": a tail stopped while more WAL is written loses its slot"
                        + " (exit " + ErrorCode.TAIL_SLOT_LOST.exitCode() + ")");
    }

    /**
     * The publication the tail streams: created by the tail when absent. One that exists must carry the table's
     * changes under its own name: for a partitioned table that takes {@code publish_via_partition_root}, without which
     * they are published under each partition's name.
     */
    static Finding publication(Connection c, String table, String name) throws SQLException {
        boolean partitioned = isPartitioned(c, table);
        Boolean viaRoot = null;
        try (PreparedStatement ps = c.prepareStatement("SELECT pubviaroot FROM pg_publication WHERE pubname = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                if (rs.next()) viaRoot = rs.getBoolean(1);
            }
        }
        String kind = partitioned ? "partitioned table " : "table ";
        if (viaRoot == null) {
            return Finding.ok(
                    "publication",
                    "'" + name + "' will be created by the tail for " + kind + table
                            + (partitioned ? ", publishing through the partition root" : ""));
        }
        if (partitioned && !viaRoot) {
            return Finding.blocking(
                    "publication",
                    "publication '" + name + "' (tail.publication) publishes the changes of partitioned table "
                            + table + " under its partitions' names, which the tail does not read; run ALTER"
                            + " PUBLICATION \"" + name + "\" SET (publish_via_partition_root = true), or drop it and"
                            + " let the tail create it");
        }
        if (!publishes(c, name, table)) {
            // The tail's Debezium sets the publication's tables to this one (publication.autocreate.mode filtered).
            return Finding.warning(
                    "publication",
                    "publication '" + name + "' (tail.publication) exists but does not include " + table + ": the tail"
                            + " sets its tables to " + table + " alone, so any other table it publishes leaves it; give"
                            + " the tail a publication of its own (tail.publication) if another reader uses this one");
        }
        return Finding.ok("publication", "'" + name + "' publishes " + kind + table);
    }

    /** Whether {@code table} is the parent of declarative partitions. */
    public static boolean isPartitioned(Connection c, String table) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT relkind = 'p' FROM pg_class WHERE oid = ?::regclass")) {
            ps.setString(1, table);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }

    /** Whether the publication carries {@code table}'s changes under the table's own name. */
    static boolean publishes(Connection c, String publication, String table) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT EXISTS (SELECT 1 FROM pg_publication_tables pt"
                + " WHERE pt.pubname = ? AND format('%I.%I', pt.schemaname, pt.tablename)::regclass = ?::regclass)")) {
            ps.setString(1, publication);
            ps.setString(2, table);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
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

    /**
     * The REPLICATION attribute, superuser, or membership in {@code rds_replication}: RDS and Aurora grant the right
     * through that role and allow neither of the others.
     */
    static void role(Connection c, String user) throws SQLException {
        String can = one(
                c,
                "SELECT (rolreplication OR rolsuper OR EXISTS (SELECT 1 FROM pg_roles g"
                        + " WHERE g.rolname = 'rds_replication' AND pg_has_role(current_user, g.oid, 'MEMBER')))::text"
                        + " FROM pg_roles WHERE rolname = current_user");
        if (!"true".equals(can)) {
            throw new RebalanceException(
                    ErrorCode.REPLICATION_ROLE,
                    "Postgres role '" + user + "' may not replicate (no REPLICATION attribute); run ALTER ROLE \""
                            + user + "\" REPLICATION as a superuser (on RDS or Aurora: GRANT rds_replication TO \""
                            + user + "\"), or set source.user to a role that has it");
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
                TableId id = new TableId(rs.getString(1), rs.getString(2), isPartitioned(c, table.name()));
                String identity = rs.getString(3);
                List<String> pk = list(rs.getArray(4));
                List<String> identityIndex = list(rs.getArray(5));
                List<String> carried =
                        switch (identity) {
                            case "d" -> pk;
                            case "i" -> identityIndex;
                            case "f" -> table.key().columns();
                            default -> List.of();
                        };
                // A partitioned table's primary key holds its partition key too: the WAL then names rows by both.
                List<String> key = table.key().columns();
                boolean names = (carried.size() == key.size() && carried.containsAll(key))
                        || (id.partitioned() && carried.containsAll(key));
                if (!names) {
                    String found = identity.equals("n")
                            ? "REPLICA IDENTITY NOTHING"
                            : carried.isEmpty() ? "no primary key" : "a WAL key of " + carried;
                    throw new RebalanceException(
                            ErrorCode.SOURCE_NO_PRIMARY_KEY,
                            "source table " + table.name() + " has " + found + ", so its updates and deletes do not"
                                    + " name rows by " + table.key().describe() + " in the WAL; make "
                                    + table.key().describe() + " the primary key, or run ALTER TABLE " + table.name()
                                    + " REPLICA IDENTITY USING INDEX <a unique index on "
                                    + table.key().describe() + ">");
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

    private static List<String> list(Array a) throws SQLException {
        if (a == null) return List.of();
        List<String> out = new ArrayList<>();
        for (Object o : (Object[]) a.getArray()) out.add((String) o);
        return out;
    }
}
