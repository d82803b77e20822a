package io.rebalance.protocol.fence;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The roles applications write as, against the Postgres fence (ADR 9): each may check it (SELECT) and none may change
 * it, or it could reopen the fence under a cutover. {@code cutover --prepare} grants and checks; the cutover's
 * pre-check checks again.
 */
public final class FenceRoles {
    /** The one privilege an application role needs on the fence table; any of the others would let it reopen it. */
    public static final String MODIFYING_PRIVILEGES = "INSERT, UPDATE, DELETE, TRUNCATE, TRIGGER";

    private final String table;

    FenceRoles(String table) {
        this.table = table;
    }

    /** Lets {@code role} check the fence (SELECT), and nothing more. Needs the table's owner or the grant option. */
    public void grantCheck(Connection c, String role) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("GRANT SELECT ON " + table + " TO \"" + role.replace("\"", "\"\"") + "\"");
        }
    }

    /**
     * The roles among {@code roles} that could reopen the fence (any of {@link #MODIFYING_PRIVILEGES} on the table:
     * superusers and the table's owner have them all), or that cannot check it (no SELECT), each with why.
     *
     * @return role to what is wrong with it; empty when every role may check the fence and none may change it
     */
    public Map<String, String> unfitRoles(Connection c, Collection<String> roles) throws SQLException {
        Map<String, String> unfit = new LinkedHashMap<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT r.oid IS NOT NULL,"
                + " coalesce(r.rolsuper, false),"
                + " r.oid IS NOT NULL AND has_table_privilege(r.oid, ?::regclass, 'SELECT'),"
                + " r.oid IS NOT NULL AND has_table_privilege(r.oid, ?::regclass, '" + MODIFYING_PRIVILEGES + "')"
                + " FROM (SELECT ?::text AS name) n LEFT JOIN pg_roles r ON r.rolname = n.name")) {
            for (String role : roles) {
                ps.setString(1, table);
                ps.setString(2, table);
                ps.setString(3, role);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    if (!rs.getBoolean(1)) unfit.put(role, "no such role");
                    else if (rs.getBoolean(2)) unfit.put(role, "is a superuser, so it could reopen the fence");
                    else if (rs.getBoolean(4))
                        unfit.put(
                                role,
                                "may change " + table + " (one of " + MODIFYING_PRIVILEGES
                                        + "), so it could reopen the fence: REVOKE " + MODIFYING_PRIVILEGES + " ON "
                                        + table
                                        + " FROM " + role
                                        + " (an owner keeps them: the fence table must belong to another"
                                        + " role)");
                    else if (!rs.getBoolean(3))
                        unfit.put(
                                role,
                                "cannot read " + table + ", so every guarded write fails: GRANT SELECT ON " + table
                                        + " TO " + role);
                }
            }
        }
        return unfit;
    }
}
