package io.rebalance.protocol.fence;

import io.rebalance.protocol.handoff.Lsn;
import io.rebalance.protocol.route.RouteStatus;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The Postgres side of the fence: a row per scope in {@code rebalance_fence}, and a transaction-level advisory lock
 * per scope beside it. Every guarded write takes the lock shared in its own transaction, then reads the row, either
 * with its commit ({@link #commitIfAdmitted}) or first ({@link #check}); the cutover takes it exclusive before it
 * updates the row ({@link #set}). So the update waits for
 * every transaction that checked the row, and every check after it reads the new row, and a writer refused once
 * cannot slip a write in later (ADR 7).
 *
 * <p>An advisory lock, not {@code SELECT ... FOR SHARE}: share-locking one row from many transactions at once makes
 * a multixact nearly per write, and needs the UPDATE privilege, with which an application role could reopen the fence
 * itself. A check needs only SELECT on the table. It needs READ COMMITTED: the row is read by a statement that starts
 * after the lock is granted, which under REPEATABLE READ would still see the snapshot taken before the wait (ADR 7).
 * Uses only {@code java.sql}: applications bring their own driver.
 */
public final class PostgresFence {
    static final String COPY_RECORD = "copy_record";
    /**
     * The prefix of the transactional logical message that opens each reverse-stream transaction: the forward tail
     * tells its changes from writes that bypassed the fence by it.
     */
    public static final String REVERSE_MARK = "rebalance.reverse";

    private final String table;
    private final String select;
    private final String lockShared;
    private final String lockExclusive;
    /** Fails with division_by_zero unless the row admits applications with the token, at READ COMMITTED. */
    private final String admitOrFail;

    /** @param table the fence table, schema-qualified and quoted as needed, e.g. {@code public.rebalance_fence} */
    public PostgresFence(String table) {
        this.table = table;
        this.select = "SELECT writer, min_token, route, epoch, closed_lsn::text,"
                + " current_setting('transaction_isolation'), scope FROM " + table;
        // one 64-bit key per fence table and scope; the table's name keeps it apart from other migrations' fences
        this.lockShared = "SELECT pg_advisory_xact_lock_shared(hashtextextended(?, 0))";
        this.lockExclusive = "SELECT pg_advisory_xact_lock(hashtextextended(?, 0))";
        // one statement that fails unless admitted, so the COMMIT behind it in the same round trip runs only then
        this.admitOrFail = "SELECT 1 / coalesce((SELECT 1 FROM " + table + " WHERE writer = 'app' AND min_token <= ?"
                + " AND scope = ? AND current_setting('transaction_isolation') = 'read committed'), 0)";
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
            FenceColumns.addMissing(c, s, table);
        }
        try (PreparedStatement ps = c.prepareStatement(
                "INSERT INTO " + table + " (scope, writer, min_token) VALUES (?, 'app', 0) ON CONFLICT DO NOTHING")) {
            ps.setString(1, scope);
            ps.executeUpdate();
        }
    }

    /**
     * Keeps the record of a finished copy on the scope's row (ADR 12): what Redis held of it, so a Redis that lost it
     * can be given it back; null clears it. An update of the row only, never DDL: guarded writes read the table.
     *
     * @return false when the fence is not installed, or was installed by a version without the column (`cutover
     *     --prepare` adds it)
     */
    public boolean recordCopy(Connection c, String scope, String record) throws SQLException {
        if (!hasColumn(c, COPY_RECORD)) return false;
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + table + " SET copy_record = ? WHERE scope = ?")) {
            ps.setString(1, record);
            ps.setString(2, scope);
            return ps.executeUpdate() == 1;
        }
    }

    /** @return the record of the finished copy kept on the scope's row; empty without one, or without the fence */
    public Optional<String> copyRecord(Connection c, String scope) throws SQLException {
        if (!hasColumn(c, COPY_RECORD)) return Optional.empty(); // no fence, or one installed before the column
        try (PreparedStatement ps = c.prepareStatement("SELECT copy_record FROM " + table + " WHERE scope = ?")) {
            ps.setString(1, scope);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.ofNullable(rs.getString(1)) : Optional.empty();
            }
        }
    }

    /**
     * Inside the caller's transaction, before its write: takes the scope's lock shared until that transaction ends,
     * then reads the fence. One round trip.
     *
     * @throws FencedException when the fence does not admit applications with {@code token}
     * @throws IllegalStateException when the fence was never installed (and so protects nothing)
     * @throws SQLException also when the transaction is not READ COMMITTED (SQLState 25000)
     */
    public void check(Connection c, String scope, long token) throws SQLException {
        if (c.getAutoCommit()) {
            throw new IllegalStateException(
                    "the fence check must run in the write's own transaction: turn autocommit off on the connection");
        }
        FenceState state = readShared(c, scope);
        if (!state.admitsApp(token)) throw new FencedException("Postgres", scope, token, state.toString());
    }

    /**
     * In place of the caller's {@code commit()}, after its writes: takes the scope's lock shared, reads the fence and
     * commits only if it admits applications with {@code token}, all in one round trip, so a guarded write costs no
     * round trip more than a plain one. As safe as {@link #check} first: a cutover's update of the fence waits for a
     * transaction that holds the lock, and one that takes it after the update reads the new row and rolls back.
     *
     * @throws FencedException when the fence does not admit applications with {@code token} (rolled back)
     * @throws IllegalStateException when the fence was never installed (rolled back)
     * @throws SQLException as {@link #check}; the transaction is rolled back
     */
    public void commitIfAdmitted(Connection c, String scope, long token) throws SQLException {
        if (c.getAutoCommit()) {
            throw new IllegalStateException("the fence must be checked in the write's own transaction: turn autocommit"
                    + " off on the connection");
        }
        try (PreparedStatement ps = c.prepareStatement(lockShared + "; " + admitOrFail + "; COMMIT")) {
            ps.setString(1, lockKey(scope));
            ps.setLong(2, token);
            ps.setString(3, scope);
            ps.execute();
        } catch (SQLException e) {
            c.rollback();
            if (!"22012".equals(e.getSQLState())) throw e; // division_by_zero: the fence refused, as admitOrFail says
            FenceState state;
            String isolation;
            try {
                state = read(c, scope, ""); // not installed: IllegalStateException
                try (Statement s = c.createStatement();
                        ResultSet rs = s.executeQuery("SELECT current_setting('transaction_isolation')")) {
                    rs.next();
                    isolation = rs.getString(1);
                }
            } finally {
                c.rollback(); // the diagnosis leaves no transaction open
            }
            // an open fence refused only for the isolation (set per transaction, so the session's may read otherwise)
            if (!"read committed".equals(isolation) || state.admitsApp(token)) {
                throw new SQLException(
                        notReadCommitted("read committed".equals(isolation) ? "another level" : isolation), "25000");
            }
            throw new FencedException("Postgres", scope, token, state.toString());
        }
    }

    /**
     * Inside the reverse stream's transaction, before its writes: takes the scope's lock shared until that
     * transaction ends, so the fence cannot change under the writes. @return the fence as it stays until then
     */
    public FenceState lockForReverse(Connection c, String scope) throws SQLException {
        // Only while the fence admits the reverse stream (the row cannot change under the lock): the setting lets its
        // writes past the fence's trigger; the transactional message tells the forward tail the changes after it in
        // the transaction are this stream's, not writes that bypassed the fence.
        try (PreparedStatement ps = c.prepareStatement(lockShared + "; SELECT set_config('"
                + FenceTrigger.WRITER_SETTING + "', 'reverse', true), pg_logical_emit_message(true, '" + REVERSE_MARK
                + "', '')::text FROM " + table + " WHERE scope = ? AND writer = 'reverse'; " + select
                + " WHERE scope = ?")) {
            ps.setString(1, lockKey(scope));
            ps.setString(2, scope);
            ps.setString(3, scope);
            ps.execute();
            ps.getMoreResults();
            if (!ps.getMoreResults()) throw new IllegalStateException("the fence read returned no result");
            try (ResultSet rs = ps.getResultSet()) {
                return state(rs, scope);
            }
        }
    }

    /** The lock and the read in one round trip, as two statements: the read's snapshot is taken after the lock. */
    private FenceState readShared(Connection c, String scope) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(lockShared + "; " + select + " WHERE scope = ?")) {
            ps.setString(1, lockKey(scope));
            ps.setString(2, scope);
            ps.execute();
            if (!ps.getMoreResults()) throw new IllegalStateException("the fence read returned no result");
            try (ResultSet rs = ps.getResultSet()) {
                FenceState state = state(rs, scope);
                String isolation = rs.getString(6);
                if (!"read committed".equals(isolation)) {
                    throw new SQLException(notReadCommitted(isolation), "25000"); // invalid transaction state
                }
                return state;
            }
        }
    }

    private static String notReadCommitted(String isolation) {
        return "the fence check needs its transaction at READ COMMITTED, not " + isolation + ": there the fence row"
                + " would be read from a snapshot taken before the check waited for a cutover, so a closed fence could"
                + " read open. Run guarded writes at READ COMMITTED (Postgres' default)";
    }

    /** Takes the scope's lock exclusive in the caller's transaction: waits for every transaction that checked. */
    private void lockExclusive(Connection c, String scope) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(lockExclusive)) {
            ps.setString(1, lockKey(scope));
            ps.execute();
        }
    }

    /** The text whose 64-bit hash is the scope's advisory lock key; the trigger takes the same lock. */
    String lockKey(String scope) {
        return lockPrefix() + scope;
    }

    /** What every lock key of this fence table starts with: the part trigger adds a part's scope in SQL. */
    String lockPrefix() {
        return "rebalance.fence:" + table + ":";
    }

    boolean hasColumn(Connection c, String column) throws SQLException {
        return FenceColumns.of(c, table).contains(column);
    }

    /** The trigger that enforces this fence on the moved table, for every writer. */
    public FenceTrigger trigger() {
        return new FenceTrigger(this);
    }

    /** Who may check this fence and who could reopen it. */
    public FenceRoles roles() {
        return new FenceRoles(table);
    }

    public FenceState state(Connection c, String scope) throws SQLException {
        return read(c, scope, "");
    }

    /** The fence without locking it; empty when the table or the scope's row does not exist (never prepared). */
    public Optional<FenceState> find(Connection c, String scope) throws SQLException {
        return Optional.ofNullable(findAll(c, List.of(scope)).get(scope));
    }

    /** The fences of {@code scopes} that exist, in one query, by scope (a table's parts); unlocked, as {@link #find}. */
    public Map<String, FenceState> findAll(Connection c, List<String> scopes) throws SQLException {
        Map<String, FenceState> out = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
            ps.setString(1, table);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next() || !rs.getBoolean(1)) return out;
            }
        }
        try (PreparedStatement ps = c.prepareStatement(select + " WHERE scope = ANY (?)")) {
            ps.setArray(1, c.createArrayOf("text", scopes.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) out.put(rs.getString(7), state(rs));
            }
        }
        return out;
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
        return underLock(c, scope, lockWait, () -> {
            FenceState before = read(c, scope, " FOR UPDATE");
            if (minToken < before.minToken())
                throw new TokenBehindException("Postgres", scope, minToken, before.minToken());
            boolean closing = writer != FenceWriter.APP && before.writer() == FenceWriter.APP;
            boolean opening = writer == FenceWriter.APP && before.writer() != FenceWriter.APP;
            // before closed_lsn is noted: enabling the table's trigger waits for every transaction writing the table
            if (closing || opening) trigger().follow(c, scope, closing);
            try (PreparedStatement ps = c.prepareStatement("UPDATE " + table
                    + " SET writer = ?, min_token = ?, updated_at = now()"
                    + (closing ? ", closed_lsn = pg_current_wal_insert_lsn()" : "") + " WHERE scope = ?")) {
                ps.setString(1, writer.wire());
                ps.setLong(2, minToken);
                ps.setString(3, scope);
                ps.executeUpdate();
            }
            return before;
        });
    }

    /**
     * Waits at most {@code lockWait} for every transaction holding the scope's lock (a guarded write that checked the
     * fence, a reverse-stream batch) to end, and changes nothing: one begun before the call has committed or rolled
     * back when it returns.
     */
    public void awaitHolders(Connection c, String scope, Duration lockWait) throws SQLException {
        underLock(c, scope, lockWait, () -> null);
    }

    /**
     * Records the route a flip moves to, with its epoch, in its own transaction; an older epoch never replaces a
     * newer one. Waits at most {@code lockWait} for the transactions that took the fence lock shared.
     *
     * @param token the recording command's token: a command whose lease another one took since (a higher token set
     *     the fence) records nothing
     * @throws TokenBehindException when {@code token} is below the fence's min_token (nothing is changed)
     */
    public void record(Connection c, String scope, RouteStatus route, long epoch, long token, Duration lockWait)
            throws SQLException {
        underLock(c, scope, lockWait, () -> {
            try (PreparedStatement ps = c.prepareStatement("UPDATE " + table + " SET route = ?, epoch = ?,"
                    + " updated_at = now() WHERE scope = ? AND epoch <= ? AND min_token <= ? RETURNING 1")) {
                ps.setString(1, route.name());
                ps.setLong(2, epoch);
                ps.setString(3, scope);
                ps.setLong(4, epoch);
                ps.setLong(5, token);
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) return null;
                }
            }
            FenceState now = state(c, scope);
            if (now.minToken() > token) throw new TokenBehindException("Postgres", scope, token, now.minToken());
            return null; // a newer flip recorded already: keep it
        });
    }

    /** Work done in a transaction of its own under the scope's lock. */
    private interface Locked<T> {
        T run() throws SQLException;
    }

    /**
     * Runs {@code work} in its own transaction after taking the scope's lock exclusive, waiting at most {@code
     * lockWait} for it; commits, or rolls back when the work fails.
     */
    private <T> T underLock(Connection c, String scope, Duration lockWait, Locked<T> work) throws SQLException {
        boolean auto = c.getAutoCommit();
        c.setAutoCommit(false);
        try (Statement s = c.createStatement()) {
            s.execute("SET LOCAL lock_timeout = " + Math.max(1, lockWait.toMillis()));
            lockExclusive(c, scope);
            T out = work.run();
            c.commit();
            return out;
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
                return state(rs, scope);
            }
        }
    }

    private FenceState state(ResultSet rs, String scope) throws SQLException {
        if (!rs.next()) {
            throw new IllegalStateException("no row for scope '" + scope + "' in " + table
                    + ": the fence is not installed; run `rebalance cutover --prepare` first");
        }
        return state(rs);
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
