package io.rebalance.core.coordinator;

import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.lease.PostgresLeaseStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The copy's coordination tables in a Postgres schema of their own ({@code rebalance} unless named), created on first
 * use with a version row, so a later release can tell which tables it finds and migrate them. Creation runs in one
 * transaction under an advisory lock, so processes starting together create the tables once.
 */
public final class CoordinatorSchema {
    /** The version of the tables this release creates and reads. */
    public static final int VERSION = 1;

    private final String name;
    private final String schema;

    /** @param schema the schema's name, unquoted */
    public CoordinatorSchema(String schema) {
        if (schema == null || schema.isBlank())
            throw new IllegalArgumentException("the coordinator's schema needs a name");
        this.name = schema;
        this.schema = "\"" + schema.replace("\"", "\"\"") + "\"";
    }

    /** The schema's name, unquoted. */
    public String name() {
        return name;
    }

    /** The single-holder leases ({@link PostgresLeaseStore}), qualified. */
    public String leases() {
        return schema + ".leases";
    }

    /**
     * A slot per row, named {@code <run>/<slot>}: its lease (the lease table's columns) and its state. Claimable rows
     * (not FINISHED) are in a partial index, so finding work stays cheap however many slots are done.
     */
    public String slots() {
        return schema + ".slots";
    }

    /** Rows taken per run and second of the database's clock, UNLOGGED: counts that need no WAL. */
    public String rateWindows() {
        return schema + ".rate_windows";
    }

    /**
     * A row per run: its status, plan (json), watermark, rows limit, counts and progress line (a json object of
     * fields).
     */
    public String runs() {
        return schema + ".runs";
    }

    /** A row per run and copy process: when the database last heard from it, and what it said. */
    public String processes() {
        return schema + ".processes";
    }

    /** A row per run: its write-unit budget's fields, a json object of numbers (as Redis keeps them in a hash). */
    public String writeUnits() {
        return schema + ".write_units";
    }

    /** Named sets of a run's records (refused rows, verification results): a row per run, set and field. */
    public String records() {
        return schema + ".records";
    }

    /** The runs' event lines, numbered in the order they came; each run keeps its newest. */
    public String events() {
        return schema + ".events";
    }

    /**
     * Creates the schema and its tables unless they exist. Tables of this version found already are left alone, with
     * no DDL: a process starting beside running ones takes no lock on their tables.
     *
     * @param c a connection in autocommit (the creation is its own transaction)
     * @throws RebalanceException when the tables were made by a newer release (CONFIG_INVALID, naming the version)
     */
    public void ensure(Connection c) throws SQLException {
        if (!c.getAutoCommit()) throw new IllegalArgumentException("the coordinator's tables are made in autocommit");
        if (version(c) == VERSION) return;
        c.setAutoCommit(false);
        try (Statement st = c.createStatement()) {
            st.execute("SELECT pg_advisory_xact_lock(hashtextextended('rebalance coordinator ' || "
                    + quoteLiteral(schema) + ", 0))");
            st.execute("CREATE SCHEMA IF NOT EXISTS " + schema);
            st.execute("CREATE TABLE IF NOT EXISTS " + schema + ".version (version int NOT NULL)");
            int found = version(c);
            if (found > VERSION) {
                throw new RebalanceException(
                        ErrorCode.CONFIG_INVALID,
                        "the coordinator tables in schema " + schema + " are version " + found
                                + ", made by a newer rebalance than this one (version " + VERSION
                                + "); run that release, or name another schema");
            }
            st.execute("CREATE TABLE IF NOT EXISTS " + leases() + " (" + PostgresLeaseStore.COLUMNS + ")");
            st.execute("CREATE TABLE IF NOT EXISTS " + slots() + " (" + PostgresLeaseStore.COLUMNS + ", status text NOT"
                    + " NULL DEFAULT 'PENDING', last_id text NOT NULL DEFAULT '', rows bigint NOT NULL DEFAULT 0,"
                    + " saved_by text, error text, updated_at timestamptz)");
            st.execute(
                    "CREATE INDEX IF NOT EXISTS slots_claimable ON " + slots() + " (name) WHERE status <> 'FINISHED'");
            st.execute("CREATE UNLOGGED TABLE IF NOT EXISTS " + rateWindows() + " (run text NOT NULL, second bigint NOT"
                    + " NULL, used bigint NOT NULL, PRIMARY KEY (run, second))");
            st.execute("CREATE TABLE IF NOT EXISTS " + runs() + " (run text PRIMARY KEY, status text, plan text,"
                    + " watermark text, rate_limit bigint NOT NULL DEFAULT 0, rows_copied bigint NOT NULL DEFAULT 0,"
                    + " slots_finished bigint NOT NULL DEFAULT 0, progress jsonb NOT NULL DEFAULT '{}')");
            st.execute("CREATE TABLE IF NOT EXISTS " + processes() + " (run text NOT NULL, id text NOT NULL, seen_at"
                    + " timestamptz NOT NULL, info text NOT NULL, PRIMARY KEY (run, id))");
            st.execute("CREATE TABLE IF NOT EXISTS " + events() + " (run text NOT NULL, id bigint GENERATED ALWAYS AS"
                    + " IDENTITY, at_ms bigint NOT NULL, line text NOT NULL, PRIMARY KEY (run, id))");
            st.execute("CREATE TABLE IF NOT EXISTS " + writeUnits() + " (run text PRIMARY KEY, fields jsonb NOT NULL"
                    + " DEFAULT '{}')");
            st.execute("CREATE TABLE IF NOT EXISTS " + records() + " (run text NOT NULL, name text NOT NULL, field"
                    + " text NOT NULL, value text NOT NULL, PRIMARY KEY (run, name, field))");
            if (found < VERSION) st.execute("INSERT INTO " + schema + ".version VALUES (" + VERSION + ")");
            c.commit();
        } catch (SQLException | RuntimeException e) {
            try {
                c.rollback();
            } catch (SQLException r) {
                e.addSuppressed(r);
            }
            throw e;
        } finally {
            c.setAutoCommit(true);
        }
    }

    /**
     * Deletes every row of {@code run} from every table, in one transaction ({@code rebalance reset}).
     *
     * @param dryRun count them and delete nothing
     * @return the rows of the run (deleted, unless {@code dryRun})
     */
    public long forget(Connection c, String run, boolean dryRun) throws SQLException {
        String[] byRun = {runs(), processes(), events(), rateWindows(), writeUnits(), records()};
        c.setAutoCommit(false);
        try {
            long rows = 0;
            for (String table : byRun) rows += rowsOf(c, dryRun, table, "run = ?", run);
            // a slot's row and the keeper's lease are named <run>/...; '0' follows '/' in the "C" collation
            for (String table : new String[] {slots(), leases()})
                rows += rowsOf(c, dryRun, table, "name > ? AND name < ?", run + "/", run + "0");
            c.commit();
            c.setAutoCommit(true);
            return rows;
        } catch (SQLException | RuntimeException e) {
            try {
                c.rollback();
                c.setAutoCommit(true);
            } catch (SQLException r) {
                e.addSuppressed(r); // the backend may be gone: what failed first is what to report
            }
            throw e;
        }
    }

    private static long rowsOf(Connection c, boolean dryRun, String table, String where, String... args)
            throws SQLException {
        String sql = dryRun
                ? "SELECT count(*) FROM " + table + " WHERE " + where
                : "WITH gone AS (DELETE FROM " + table + " WHERE " + where + " RETURNING 1) SELECT count(*) FROM gone";
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) ps.setString(i + 1, args[i]);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** The version of the tables in the schema, 0 when there are none. */
    private int version(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            // two queries: a query naming a table that does not exist fails before it runs
            try (ResultSet rs =
                    st.executeQuery("SELECT to_regclass(" + quoteLiteral(schema + ".version") + ") IS NOT NULL")) {
                rs.next();
                if (!rs.getBoolean(1)) return 0;
            }
            try (ResultSet rs = st.executeQuery("SELECT coalesce(max(version), 0) FROM " + schema + ".version")) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    private static String quoteLiteral(String s) {
        return "'" + s.replace("'", "''") + "'";
    }
}
