package io.rebalance.core.fence;

import io.rebalance.core.handoff.Lsn;
import io.rebalance.core.route.RouteStatus;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;

/**
 * The Postgres side of the fence: a row per scope in {@code rebalance_fence} that every guarded write share-locks in
 * its own transaction ({@link #check}) and the cutover updates ({@link #set}). The update waits for every
 * transaction that checked the row, and every check after it sees the new row, so a writer refused once cannot slip
 * a write in later (ADR 7). Uses only {@code java.sql}: applications bring their own driver.
 */
public final class PostgresFence {
    private final String table;
    private final String select;

    /** @param table the fence table, schema-qualified and quoted as needed, e.g. {@code public.rebalance_fence} */
    public PostgresFence(String table) {
        this.table = table;
        this.select = "SELECT writer, min_token, route, epoch, closed_lsn::text FROM " + table;
    }

    public String table() {
        return table;
    }

    /**
     * Creates the table and the scope's row (writer {@code app}, min token 0, route SOURCE, epoch 1) unless they
     * exist; adds the route's columns to a table created before they existed.
     */
    public void install(Connection c, String scope) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS " + table + " (scope text PRIMARY KEY, writer text NOT NULL,"
                    + " min_token bigint NOT NULL, updated_at timestamptz NOT NULL DEFAULT now())");
            s.execute("ALTER TABLE " + table + " ADD COLUMN IF NOT EXISTS route text NOT NULL DEFAULT 'SOURCE',"
                    + " ADD COLUMN IF NOT EXISTS epoch bigint NOT NULL DEFAULT 1,"
                    + " ADD COLUMN IF NOT EXISTS closed_lsn pg_lsn");
        }
        try (PreparedStatement ps = c.prepareStatement(
                "INSERT INTO " + table + " (scope, writer, min_token) VALUES (?, 'app', 0) ON CONFLICT DO NOTHING")) {
            ps.setString(1, scope);
            ps.executeUpdate();
        }
    }

    /**
     * Inside the caller's transaction, before its write: share-locks the scope's row until that transaction ends.
     *
     * @throws FencedException when the fence does not admit applications with {@code token}
     * @throws IllegalStateException when the fence was never installed (and so protects nothing)
     */
    public void check(Connection c, String scope, long token) throws SQLException {
        if (c.getAutoCommit()) {
            throw new IllegalStateException(
                    "the fence check must run in the write's own transaction: turn autocommit off on the connection");
        }
        FenceState state = read(c, scope, " FOR SHARE");
        if (!state.admitsApp(token)) throw new FencedException("Postgres", scope, token, state.toString());
    }

    /**
     * Inside the reverse stream's transaction, before its writes: share-locks the scope's row until that transaction
     * ends, so the fence cannot change under the writes. @return the fence as it stays until then
     */
    public FenceState lockForReverse(Connection c, String scope) throws SQLException {
        return read(c, scope, " FOR SHARE");
    }

    public FenceState state(Connection c, String scope) throws SQLException {
        return read(c, scope, "");
    }

    /** The fence without locking it; empty when the table or the scope's row does not exist (never prepared). */
    public Optional<FenceState> find(Connection c, String scope) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
            ps.setString(1, table);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next() || !rs.getBoolean(1)) return Optional.empty();
            }
        }
        try (PreparedStatement ps = c.prepareStatement(select + " WHERE scope = ?")) {
            ps.setString(1, scope);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(state(rs)) : Optional.empty();
            }
        }
    }

    /**
     * Sets the fence in its own transaction, waiting at most {@code lockWait} for the writes that checked it. Closing
     * it to applications notes the WAL position ({@link FenceState#closedLsn}): the transactions that checked it have
     * committed by then, so every application change lies before that position.
     *
     * @return the state it replaced
     * @throws TokenBehindException when {@code minToken} is below the fence's (nothing is changed: tokens only rise)
     */
    public FenceState set(Connection c, String scope, FenceWriter writer, long minToken, Duration lockWait)
            throws SQLException {
        boolean auto = c.getAutoCommit();
        c.setAutoCommit(false);
        try (Statement s = c.createStatement()) {
            s.execute("SET LOCAL lock_timeout = " + Math.max(1, lockWait.toMillis()));
            FenceState before = read(c, scope, " FOR UPDATE");
            if (minToken < before.minToken())
                throw new TokenBehindException("Postgres", scope, minToken, before.minToken());
            boolean closing = writer != FenceWriter.APP && before.writer() == FenceWriter.APP;
            try (PreparedStatement ps = c.prepareStatement("UPDATE " + table
                    + " SET writer = ?, min_token = ?, updated_at = now()"
                    + (closing ? ", closed_lsn = pg_current_wal_insert_lsn()" : "") + " WHERE scope = ?")) {
                ps.setString(1, writer.wire());
                ps.setLong(2, minToken);
                ps.setString(3, scope);
                ps.executeUpdate();
            }
            c.commit();
            return before;
        } catch (SQLException | RuntimeException e) {
            c.rollback();
            throw e;
        } finally {
            c.setAutoCommit(auto);
        }
    }

    /**
     * Records the route a flip moves to, with its epoch, in its own transaction; an older epoch never replaces a
     * newer one. Waits at most {@code lockWait} for the reverse stream's transactions that share-locked the row.
     */
    public void record(Connection c, String scope, RouteStatus route, long epoch, Duration lockWait)
            throws SQLException {
        boolean auto = c.getAutoCommit();
        c.setAutoCommit(false);
        try (Statement s = c.createStatement();
                PreparedStatement ps = c.prepareStatement("UPDATE " + table
                        + " SET route = ?, epoch = ?, updated_at = now() WHERE scope = ? AND epoch <= ?")) {
            s.execute("SET LOCAL lock_timeout = " + Math.max(1, lockWait.toMillis()));
            ps.setString(1, route.name());
            ps.setLong(2, epoch);
            ps.setString(3, scope);
            ps.setLong(4, epoch);
            ps.executeUpdate();
            c.commit();
        } catch (SQLException | RuntimeException e) {
            c.rollback();
            throw e;
        } finally {
            c.setAutoCommit(auto);
        }
    }

    private FenceState read(Connection c, String scope, String lock) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(select + " WHERE scope = ?" + lock)) {
            ps.setString(1, scope);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new IllegalStateException("no row for scope '" + scope + "' in " + table
                            + ": the fence is not installed; run `rebalance cutover --prepare` first");
                }
                return state(rs);
            }
        }
    }

    private static FenceState state(ResultSet rs) throws SQLException {
        String closed = rs.getString(5);
        return new FenceState(
                FenceWriter.ofWire(rs.getString(1)),
                rs.getLong(2),
                RouteStatus.valueOf(rs.getString(3)),
                rs.getLong(4),
                closed == null ? 0 : Lsn.parse(closed));
    }
}
