package io.rebalance.core.fence;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

/**
 * The Postgres side of the fence: a row per scope in {@code rebalance_fence} that every guarded write share-locks in
 * its own transaction ({@link #check}) and the cutover updates ({@link #set}). The update waits for every
 * transaction that checked the row, and every check after it sees the new row, so a writer refused once cannot slip
 * a write in later (ADR 7). Uses only {@code java.sql}: applications bring their own driver.
 */
public final class PostgresFence {
    private final String table;

    /** @param table the fence table, schema-qualified and quoted as needed, e.g. {@code public.rebalance_fence} */
    public PostgresFence(String table) {
        this.table = table;
    }

    public String table() {
        return table;
    }

    /** Creates the table and the scope's row (writer {@code app}, min token 0) unless they exist. */
    public void install(Connection c, String scope) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS " + table + " (scope text PRIMARY KEY, writer text NOT NULL,"
                    + " min_token bigint NOT NULL, updated_at timestamptz NOT NULL DEFAULT now())");
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
     * ends, so the fence cannot change under the writes. @return whether only the reverse stream may write now
     */
    public boolean admitsReverse(Connection c, String scope) throws SQLException {
        return read(c, scope, " FOR SHARE").writer() == FenceWriter.REVERSE;
    }

    public FenceState state(Connection c, String scope) throws SQLException {
        return read(c, scope, "");
    }

    /**
     * Sets the fence in its own transaction, waiting at most {@code lockWait} for the writes that checked it.
     *
     * @return the state it replaced
     */
    public FenceState set(Connection c, String scope, FenceWriter writer, long minToken, Duration lockWait)
            throws SQLException {
        boolean auto = c.getAutoCommit();
        c.setAutoCommit(false);
        try (Statement s = c.createStatement()) {
            s.execute("SET LOCAL lock_timeout = " + Math.max(1, lockWait.toMillis()));
            FenceState before = read(c, scope, " FOR UPDATE");
            try (PreparedStatement ps = c.prepareStatement(
                    "UPDATE " + table + " SET writer = ?, min_token = ?, updated_at = now() WHERE scope = ?")) {
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

    private FenceState read(Connection c, String scope, String lock) throws SQLException {
        try (PreparedStatement ps =
                c.prepareStatement("SELECT writer, min_token FROM " + table + " WHERE scope = ?" + lock)) {
            ps.setString(1, scope);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new IllegalStateException("no row for scope '" + scope + "' in " + table
                            + ": the fence is not installed; run `rebalance cutover --prepare` first");
                }
                return new FenceState(FenceWriter.ofWire(rs.getString(1)), rs.getLong(2));
            }
        }
    }
}
