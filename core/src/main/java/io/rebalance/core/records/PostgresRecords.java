package io.rebalance.core.records;

import io.rebalance.core.coordinator.CoordinatorSchema;
import io.rebalance.protocol.lease.PostgresLeaseStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;

/**
 * Records as rows of the coordinator's {@link CoordinatorSchema#records} table, keyed by run, set name and field.
 * Every call is one statement in its own transaction.
 */
public final class PostgresRecords implements Records {
    private final PostgresLeaseStore.Sessions sessions;
    private final String table;
    private final String run;
    private final String name;

    /** @param name the set's name within the run ({@code refused}, {@code verified}) */
    public PostgresRecords(PostgresLeaseStore.Sessions sessions, CoordinatorSchema schema, String run, String name) {
        this.sessions = sessions;
        this.table = schema.records();
        this.run = run;
        this.name = name;
    }

    @Override
    public void put(Map<String, String> fields) {
        if (fields.isEmpty()) return;
        run(
                "INSERT INTO " + table + " (run, name, field, value) SELECT ?, ?, f, v FROM unnest(CAST(? AS text[]),"
                        + " CAST(? AS text[])) AS t(f, v) ON CONFLICT (run, name, field) DO UPDATE SET value ="
                        + " EXCLUDED.value",
                fields.keySet().toArray(String[]::new),
                fields.values().toArray(String[]::new));
    }

    @Override
    public void remove(Collection<String> fields) {
        if (fields.isEmpty()) return;
        run("DELETE FROM " + table + " WHERE run = ? AND name = ? AND field = ANY (CAST(? AS text[]))", (Object)
                fields.toArray(String[]::new));
    }

    @Override
    public long count() {
        try (Connection c = sessions.autocommitted();
                PreparedStatement ps =
                        c.prepareStatement("SELECT count(*) FROM " + table + " WHERE run = ? AND name = ?")) {
            ps.setString(1, run);
            ps.setString(2, name);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        } catch (SQLException e) {
            throw failed(e);
        }
    }

    @Override
    public Map<String, String> all() {
        try (Connection c = sessions.autocommitted();
                PreparedStatement ps =
                        c.prepareStatement("SELECT field, value FROM " + table + " WHERE run = ? AND name = ?")) {
            ps.setString(1, run);
            ps.setString(2, name);
            Map<String, String> out = new HashMap<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) out.put(rs.getString(1), rs.getString(2));
            }
            return out;
        } catch (SQLException e) {
            throw failed(e);
        }
    }

    @Override
    public void clear() {
        run("DELETE FROM " + table + " WHERE run = ? AND name = ?");
    }

    /** One statement binding the run, the set's name, then {@code more}. */
    private void run(String sql, Object... more) {
        try (Connection c = sessions.autocommitted();
                PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, run);
            ps.setString(2, name);
            for (int i = 0; i < more.length; i++) ps.setObject(i + 3, more[i]);
            ps.executeUpdate();
        } catch (SQLException e) {
            throw failed(e);
        }
    }

    private IllegalStateException failed(SQLException e) {
        return new IllegalStateException("the " + name + " records in " + table + ": " + e.getMessage(), e);
    }
}
