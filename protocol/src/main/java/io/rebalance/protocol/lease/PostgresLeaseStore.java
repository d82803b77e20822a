package io.rebalance.protocol.lease;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;

/**
 * The single-holder lease in a Postgres table: a row per lease, {@code (name, owner, token, lease_until)}, every
 * change one statement in its own transaction (a refusal reads the holder with a second). Expiry is the database's
 * time ({@code clock_timestamp()}), never a process's. A row outlives its grants (a release or a lapse leaves it with its expiry passed), so its token only
 * rises: the next grant adds one, as Redis's counter beside the lease does. Answers as {@link RedisLeaseStore} does,
 * in the same {@link LeaseReply}. Uses only {@code java.sql}: the caller brings the driver and the table ({@code
 * core}'s coordinator schema creates it).
 */
public final class PostgresLeaseStore implements LeaseStore {
    /** A connection for a statement or two, closed by the store when it is done. */
    @FunctionalInterface
    public interface Sessions {
        Connection open() throws SQLException;

        /** A connection in autocommit: every statement of a store is its own transaction. */
        default Connection autocommitted() throws SQLException {
            Connection c = open();
            try {
                if (!c.getAutoCommit()) c.setAutoCommit(true);
                return c;
            } catch (SQLException | RuntimeException e) {
                c.close(); // a pool would lose the session for good
                throw e;
            }
        }
    }

    /** The table's columns; {@code core}'s coordinator schema creates it so. */
    public static final String COLUMNS =
            "name text COLLATE \"C\" PRIMARY KEY, owner text NOT NULL, token bigint NOT NULL,"
                    + " lease_until timestamptz NOT NULL";

    private static final String LEFT_MS = "(extract(epoch FROM lease_until - clock_timestamp()) * 1000)::int8";

    private final Sessions sessions;
    private final String acquire;
    private final String renew;
    private final String release;
    private final String holder;

    /** @param table the lease table, schema-qualified and quoted as needed, with {@link #COLUMNS} */
    public PostgresLeaseStore(Sessions sessions, String table) {
        this.sessions = sessions;
        // a live grant to the same owner is extended with its token; any other grant takes the next token
        this.acquire = "INSERT INTO " + table + " AS l (name, owner, token, lease_until) VALUES (?, ?, 1,"
                + " clock_timestamp() + ? * interval '1 millisecond') ON CONFLICT (name) DO UPDATE SET token = CASE"
                + " WHEN l.owner = EXCLUDED.owner AND l.lease_until > clock_timestamp() THEN l.token ELSE l.token + 1"
                + " END, owner = EXCLUDED.owner, lease_until = EXCLUDED.lease_until WHERE l.lease_until <="
                + " clock_timestamp() OR l.owner = EXCLUDED.owner RETURNING owner || '#' || token";
        this.renew = "UPDATE " + table + " SET lease_until = clock_timestamp() + ? * interval '1 millisecond' WHERE"
                + " name = ? AND owner || '#' || token = ? AND lease_until > clock_timestamp() RETURNING 1";
        this.release = "UPDATE " + table + " SET lease_until = '-infinity' WHERE name = ? AND owner || '#' || token = ?"
                + " AND lease_until > clock_timestamp() RETURNING 1";
        this.holder = "SELECT owner || '#' || token, " + LEFT_MS + " FROM " + table
                + " WHERE name = ? AND lease_until > clock_timestamp()";
    }

    @Override
    public LeaseReply acquire(String key, String owner, Duration ttl) {
        if (owner.contains("#")) throw new IllegalArgumentException("a lease owner has no '#': " + owner);
        try (Connection c = sessions.autocommitted();
                PreparedStatement ps = c.prepareStatement(acquire)) {
            ps.setString(1, key);
            ps.setString(2, owner);
            ps.setLong(3, ttl.toMillis());
            LeaseReply refused = null;
            // a grant that lapses between the refusal and the read of its holder is asked for once more: Redis's
            // acquire never answers "refused by nobody"
            for (int attempt = 0;
                    attempt < 2 && (refused == null || refused.member().isEmpty());
                    attempt++) {
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) return new LeaseReply(1, rs.getString(1), ttl.toMillis(), null);
                }
                refused = refused(c, key);
            }
            return refused;
        } catch (SQLException e) {
            throw new IllegalStateException("lease " + key + " in Postgres: " + e.getMessage(), e);
        }
    }

    @Override
    public LeaseReply renew(String key, String member, Duration ttl) {
        try (Connection c = sessions.autocommitted();
                PreparedStatement ps = c.prepareStatement(renew)) {
            ps.setLong(1, ttl.toMillis());
            ps.setString(2, key);
            ps.setString(3, member);
            try (ResultSet rs = ps.executeQuery()) {
                if (rs.next()) return new LeaseReply(1, member, ttl.toMillis(), null);
            }
            return refused(c, key);
        } catch (SQLException e) {
            throw new IllegalStateException("lease " + key + " in Postgres: " + e.getMessage(), e);
        }
    }

    @Override
    public LeaseReply release(String key, String member) {
        try (Connection c = sessions.autocommitted();
                PreparedStatement ps = c.prepareStatement(release)) {
            ps.setString(1, key);
            ps.setString(2, member);
            try (ResultSet rs = ps.executeQuery()) {
                if (rs.next()) return new LeaseReply(1, member, 0, null);
            }
            return refused(c, key);
        } catch (SQLException e) {
            throw new IllegalStateException("lease " + key + " in Postgres: " + e.getMessage(), e);
        }
    }

    @Override
    public String holder(String key) {
        try (Connection c = sessions.autocommitted()) {
            LeaseReply r = refused(c, key);
            return r.member().isEmpty() ? null : r.member();
        } catch (SQLException e) {
            throw new IllegalStateException("lease " + key + " in Postgres: " + e.getMessage(), e);
        }
    }

    /** Refused: who holds the lease now and for how long, or {@code ""} and -2 for nobody (as Redis's PTTL says). */
    private LeaseReply refused(Connection c, String key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(holder)) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next()
                        ? new LeaseReply(0, rs.getString(1), rs.getLong(2), null)
                        : new LeaseReply(0, "", -2, null);
            }
        }
    }
}
