package io.rebalance.core.slot;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * Where a run's key ranges are kept once planned: a small table beside the source table, {@code
 * rebalance_ranges_<table>} in its schema, whose key columns are the source key's own (same types, same collations),
 * one row a range holding its lowest key (the first range's row, with no lower end, holds NULLs), by run (the Redis
 * prefix). So the ranges outlive a Redis that restarts empty, every process of every part reads the same ranges, and
 * Postgres itself answers which range a key is in, in the order its index keeps: a collation is not something Java
 * can reproduce.
 *
 * @param table the source table, quoted and schema-qualified as Postgres resolves it
 * @param schema the source table's schema, where the ranges are kept
 * @param name the table of ranges, unquoted
 * @param run the run's Redis prefix: runs of one table under other prefixes keep ranges of their own
 */
public record KeyRangeStore(String table, String schema, String name, TableKey key, String run) {

    /** The store of {@code table}'s ranges for the run of {@code prefix}. */
    public static KeyRangeStore of(Connection c, String table, TableKey key, String prefix) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT n.nspname, cl.relname FROM pg_class cl JOIN pg_namespace"
                + " n ON n.oid = cl.relnamespace WHERE cl.oid = CAST(? AS regclass)")) {
            ps.setString(1, table);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return new KeyRangeStore(table, rs.getString(1), name(rs.getString(2)), key, prefix);
            }
        }
    }

    /** The table of ranges, quoted and schema-qualified. */
    public String planTable() {
        return SlotKeyspace.quote(schema) + "." + SlotKeyspace.quote(name);
    }

    /**
     * {@code rebalance_ranges_<table>}, shortened with a hash of the name where it and its index's name would not fit
     * Postgres' 63 bytes.
     */
    static String name(String relname) {
        String full = "rebalance_ranges_" + relname;
        if (full.getBytes(StandardCharsets.UTF_8).length <= 54) return full;
        String hash = String.format("%08x", relname.hashCode());
        String head =
                relname.chars().allMatch(ch -> ch < 128) ? relname.substring(0, Math.min(relname.length(), 24)) : "";
        return "rebalance_ranges_" + head + "_" + hash;
    }

    /** The run's ranges as planned, or empty before any process planned them. */
    public Optional<KeyRanges> load(Connection c) throws SQLException {
        if (!exists(c)) return Optional.empty();
        List<String> splits = new ArrayList<>();
        long rowsPerSlot = -1;
        try (PreparedStatement ps = c.prepareStatement("SELECT slot, rows_per_slot, " + key.selectText("p.") + " FROM "
                + planTable() + " AS p WHERE p.run = ? ORDER BY slot")) {
            ps.setString(1, run);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    int slot = rs.getInt(1);
                    if (slot != splits.size() + (rowsPerSlot < 0 ? 0 : 1))
                        throw new IllegalStateException(planTable() + " holds range " + slot + " of run " + run
                                + " out of order: its ranges were changed by hand; drop the run's rows and plan again");
                    if (slot == 0) rowsPerSlot = rs.getLong(2);
                    else splits.add(rs.getString(3));
                }
            }
        }
        return rowsPerSlot < 0 ? Optional.empty() : Optional.of(new KeyRanges(key, splits, rowsPerSlot));
    }

    /**
     * Stores {@code planned} unless another process stored the run's ranges first (one transaction under an advisory
     * lock of the run's): @return the ranges stored, this plan or the earlier one
     */
    public KeyRanges save(Connection c, KeyRanges planned) throws SQLException {
        boolean auto = c.getAutoCommit();
        c.setAutoCommit(false);
        try (Statement st = c.createStatement()) {
            try (PreparedStatement lock = c.prepareStatement("SELECT pg_advisory_xact_lock(hashtext(?))")) {
                lock.setString(1, planTable() + " " + run);
                lock.execute();
            }
            // the key columns as the source has them: type and collation, so comparing with them is the index's order
            st.execute("CREATE TABLE IF NOT EXISTS " + planTable() + " AS SELECT ''::text AS run, 0 AS slot,"
                    + " 0::int8 AS rows_per_slot, " + key.operandOrder("src.") + " FROM " + table
                    + " AS src WITH NO DATA");
            st.execute("CREATE UNIQUE INDEX IF NOT EXISTS " + index() + " ON " + planTable() + " (run, "
                    + key.operandOrder("") + ")");
            Optional<KeyRanges> earlier = load(c);
            if (earlier.isPresent()) {
                c.commit();
                return earlier.get();
            }
            String columns = key.operandOrder("");
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + planTable() + " (run, slot, rows_per_slot, "
                    + columns + ") VALUES (?, ?, ?, "
                    + String.join(", ", Collections.nCopies(key.columns().size(), "?")) + ")")) {
                for (int i = 0; i < planned.count(); i++) {
                    ps.setString(1, run);
                    ps.setInt(2, i);
                    ps.setLong(3, planned.rowsPerSlot());
                    if (i == 0) {
                        for (int p = 0; p < key.columns().size(); p++) ps.setObject(4 + p, null);
                    } else {
                        key.bind(ps, 4, planned.splits().get(i - 1));
                    }
                    ps.addBatch();
                }
                ps.executeBatch();
            }
            c.commit();
            return planned;
        } catch (SQLException | RuntimeException e) {
            c.rollback();
            throw e;
        } finally {
            c.setAutoCommit(auto);
        }
    }

    /**
     * SQL giving the range of the row aliased {@code q} (with its dot, like {@code src.}): the last range whose lowest
     * key is not above the row's, by an index probe of the plan; the first range where none is.
     */
    public String slotSql(String q) {
        StringBuilder desc = new StringBuilder();
        for (String col : key.columns()) {
            if (desc.length() > 0) desc.append(", ");
            desc.append("p.").append(SlotKeyspace.quote(col)).append(" DESC");
        }
        String runLiteral = "'" + run.replace("'", "''") + "'";
        return "coalesce((SELECT p.slot FROM " + planTable() + " AS p WHERE p.run = " + runLiteral + " AND "
                + key.operand("p.", false) + " <= " + key.operand(q, false) + " ORDER BY " + desc + " LIMIT 1), 0)";
    }

    private String index() {
        return SlotKeyspace.quote(name + "_run_key");
    }

    private boolean exists(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
            ps.setString(1, planTable());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
    }
}
