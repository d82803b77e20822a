package io.rebalance.protocol.fence;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The Postgres fence enforced by the moved table itself, for every writer and not only the guard's: a statement
 * trigger ({@code fence-trigger.sql}) that refuses every write while the fence admits no application, whoever makes
 * it (a cron job, a console session, a service never adopted), with the reverse stream's writes the one exception.
 * It covers INSERT, UPDATE, DELETE, COPY FROM, MERGE and TRUNCATE, for every role. It is enabled (ALWAYS, so it
 * fires under {@code session_replication_role = replica} too) only while the fence admits no application: {@link
 * PostgresFence#set} enables it in the transaction that closes the fence, before it notes {@code closed_lsn}, and
 * enabling it waits for every transaction writing the table, so every write taken before lies before that position
 * and reaches DynamoDB; it disables it as the fence reopens. While the fence is open it costs writers nothing
 * (ADR 7, ADR 18).
 *
 * <p>What it cannot stop: a role that owns the table or is a superuser can disable or drop it, and any session can
 * set the reverse stream's setting while the fence is {@code reverse}. The forward tail counts such writes and the
 * window cannot close over them (docs/cutover.md, "Writes that bypass the fence").
 */
public final class FenceTrigger {
    /** The SQLSTATE of a refusal: a class of its own, so a client can tell it from every error Postgres raises. */
    public static final String REFUSED = "RB001";
    /** The fence row's column naming the table the trigger guards, so a flip of the fence can enable it. */
    static final String GUARDED = "guarded_table";
    /** The transaction setting the reverse stream makes; the trigger admits it while the fence says reverse. */
    static final String WRITER_SETTING = "rebalance.writer";

    private static final String TEMPLATE = load();
    /** How long installing waits for a table's lock: writers queue behind a trigger's DDL while it waits. */
    private static final String LOCK_TIMEOUT = "5s";

    private final PostgresFence fence;
    private final String name;

    FenceTrigger(PostgresFence fence) {
        this.fence = fence;
        int dot = fence.table().lastIndexOf('.');
        // unquoted, as everything here names it, so Postgres folds it to lower case
        this.name = fence.table().substring(dot + 1).toLowerCase(Locale.ROOT);
    }

    /** The trigger's name on each table it guards: the fence table's own name. */
    public String name() {
        return name;
    }

    /**
     * The fence table as Postgres resolves it, schema-qualified: the function reads it with a fixed {@code
     * search_path}, so an unqualified name must be pinned to the schema it was created in.
     */
    String fenceTable(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT n.nspname, r.relname FROM pg_class r"
                + " JOIN pg_namespace n ON n.oid = r.relnamespace WHERE r.oid = to_regclass(?)")) {
            ps.setString(1, fence.table());
            try (ResultSet rs = ps.executeQuery()) {
                if (rs.next()) return quoted(rs.getString(1)) + "." + quoted(rs.getString(2));
            }
        }
        return fence.table().contains(".") ? fence.table() : "public." + fence.table(); // not installed yet
    }

    /** The function every guarded table's trigger calls: beside the fence table, named after it. */
    private String function(Connection c) throws SQLException {
        return besideFence(c, "_check");
    }

    /** A function's name beside the fence table: its qualified name and {@code suffix}. */
    String besideFence(Connection c, String suffix) throws SQLException {
        String table = fenceTable(c);
        return table.endsWith("\"") ? table.substring(0, table.length() - 1) + suffix + "\"" : table + suffix;
    }

    /** The trigger of a table moved part by part, each part with its own fence. */
    public PartFenceTrigger parts() {
        return new PartFenceTrigger(fence, this);
    }

    /**
     * Installs the function, records {@code table} on the scope's fence row, and puts the trigger on the table and,
     * when it is partitioned, on each partition (a statement trigger on the parent does not fire for a write naming a
     * partition), enabled as the fence is: enabled ALWAYS while it admits no application, disabled while it does
     * (then it costs writers nothing; {@link PostgresFence#set} enables it as it closes the fence). Idempotent, in the
     * caller's transaction: a table whose trigger is as it should be is left alone, and one that waits over 5 s for its
     * lock (a long transaction writing it) fails the call with SQLSTATE 55P03 rather than hold writers up behind it.
     * The fence's row must exist ({@link PostgresFence#install}).
     *
     * @param table the moved table, schema-qualified and quoted as needed
     * @throws SQLException when the role may not: {@link #missingPrivileges} says which grant is missing
     */
    public void install(Connection c, String table, String scope) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(TEMPLATE.replace("${function}", function(c)).replace("${fence}", fenceTable(c)));
        }
        try (PreparedStatement ps =
                c.prepareStatement("UPDATE " + fence.table() + " SET " + GUARDED + " = ? WHERE scope = ?")) {
            ps.setString(1, table);
            ps.setString(2, scope);
            ps.executeUpdate();
        }
        place(c, table, scope, closed(c, scope), true);
    }

    /**
     * As the fence flips, inside {@link PostgresFence#set}'s transaction and before it notes {@code closed_lsn}:
     * enables the trigger on the guarded table and its partitions (creating it on one attached since) when the fence
     * closes, disables it when it opens. Enabling takes each table's SHARE ROW EXCLUSIVE lock, so it waits for every
     * transaction writing the table, guarded or not, within the caller's lock timeout: every write taken before lies
     * before the position noted, and every write after finds the trigger. Nothing when no table was recorded.
     */
    void follow(Connection c, String scope, boolean closing) throws SQLException {
        // one round trip: this runs inside the cutover's write-blocked window
        try (PreparedStatement ps = c.prepareStatement("SELECT to_jsonb(f) ->> '" + GUARDED + "', to_jsonb(f) ->> '"
                + PartFenceTrigger.PARTS + "' FROM " + fence.table() + " f WHERE scope = ?")) {
            ps.setString(1, scope); // to_jsonb: no error on a fence made before the columns
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next() || rs.getString(1) == null) return;
                if (rs.getString(2) != null) parts().follow(c, rs.getString(1), scope, closing);
                else place(c, rs.getString(1), scope, closing, false);
            }
        }
    }

    private boolean closed(Connection c, String scope) throws SQLException {
        return fence.find(c, scope).map(f -> f.writer() != FenceWriter.APP).orElse(false);
    }

    /** Puts the trigger on {@code table} and its partitions as {@code enabled} says, with DDL only where needed. */
    private void place(Connection c, String table, String scope, boolean enabled, boolean boundWait)
            throws SQLException {
        String function = function(c);
        Map<String, Placed> placed = placed(c, function, tables(c, table), scope);
        try (Statement s = c.createStatement()) {
            for (Map.Entry<String, Placed> e : placed.entrySet()) {
                String t = e.getKey();
                Placed now = e.getValue();
                if (now == (enabled ? Placed.ENABLED : Placed.DISABLED)) continue; // no DDL, no lock taken
                if (boundWait) s.execute("SET LOCAL lock_timeout = '" + LOCK_TIMEOUT + "'");
                boundWait = false;
                if (now == Placed.MISSING || now == Placed.OTHER) {
                    s.execute("DROP TRIGGER IF EXISTS " + name + " ON " + t);
                    s.execute("CREATE TRIGGER " + name + " BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON " + t
                            + " FOR EACH STATEMENT EXECUTE FUNCTION " + function + "(" + literal(scope) + ", "
                            + literal(fence.lockKey(scope)) + ")");
                }
                s.execute("ALTER TABLE " + t + (enabled ? " ENABLE ALWAYS" : " DISABLE") + " TRIGGER " + name);
            }
        }
    }

    /**
     * Removes the trigger from {@code table} and its partitions, and the function once no table uses it: the
     * clean-up after the table is retired (a write to it is refused until then, since it would be lost).
     */
    public void remove(Connection c, String table) throws SQLException {
        String function = function(c);
        try (Statement s = c.createStatement()) {
            for (String t : tables(c, table)) s.execute("DROP TRIGGER IF EXISTS " + name + " ON " + t);
            if (!used(c, function)) s.execute("DROP FUNCTION IF EXISTS " + function + "()");
        }
    }

    private static boolean used(Connection c, String function) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT EXISTS (SELECT 1 FROM pg_trigger WHERE tgfoid = to_regprocedure(? || '()'))")) {
            ps.setString(1, function);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }

    /**
     * What the role connected lacks to install the trigger on {@code table}: ownership of the table (creating a
     * trigger needs the TRIGGER privilege, enabling it ALWAYS the owner) and CREATE on the fence's schema, each with
     * the grant that gives it; empty when it may.
     */
    public List<String> missingPrivileges(Connection c, String table) throws SQLException {
        List<String> missing = new ArrayList<>();
        String fenceTable = fenceTable(c);
        String schema = fenceTable.substring(0, fenceTable.indexOf('.'));
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_has_role(current_user, t.relowner, 'USAGE'),"
                + " t.relowner::regrole::text, current_user, has_schema_privilege(?, 'CREATE')"
                + " FROM pg_class t WHERE t.oid = ?::regclass")) {
            ps.setString(1, schema.replace("\"", ""));
            ps.setString(2, table);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) return List.of(table + " does not exist");
                String owner = rs.getString(2);
                String me = rs.getString(3);
                if (!rs.getBoolean(1)) {
                    missing.add("the role " + me + " does not own " + table + " (" + owner + " does): a trigger"
                            + " enabled ALWAYS needs the owner; run as " + owner + ", or GRANT " + owner + " TO "
                            + me);
                }
                if (!rs.getBoolean(4)) {
                    missing.add("the role " + me + " may not create the fence's function in schema " + schema
                            + ": GRANT CREATE ON SCHEMA " + schema + " TO " + me);
                }
            }
        }
        return missing;
    }

    /**
     * Where the trigger is not as the scope's fence needs it: while the fence admits no application, the table and
     * each partition must have it enabled ALWAYS; while it admits them, it may be missing (the flip creates it) but
     * must not check another fence.
     *
     * @return empty when every one is as it should be; otherwise the tables that are not, each with why
     */
    public List<String> gaps(Connection c, String table, String scope) throws SQLException {
        boolean closed = closed(c, scope);
        List<String> gaps = new ArrayList<>();
        for (Map.Entry<String, Placed> e :
                placed(c, function(c), tables(c, table), scope).entrySet()) {
            String t = e.getKey();
            Placed now = e.getValue();
            if (now == Placed.OTHER) {
                gaps.add(t + "'s trigger " + name + " checks another fence than scope '" + scope + "' of "
                        + fenceTable(c));
            } else if (closed && now == Placed.MISSING) {
                gaps.add(t + " has no trigger " + name);
            } else if (closed && now == Placed.DISABLED) {
                gaps.add(t + "'s trigger " + name + " is not enabled ALWAYS");
            }
        }
        return gaps;
    }

    /** Whether the fence's trigger is in force now: the fence admits no application and every table has it enabled. */
    public boolean enforced(Connection c, String table, String scope) throws SQLException {
        return closed(c, scope) && gaps(c, table, scope).isEmpty();
    }

    /** How the trigger stands on one table. */
    private enum Placed {
        MISSING,
        /** Calls another function, or checks another scope's fence. */
        OTHER,
        ENABLED,
        /** Disabled, or enabled other than ALWAYS. */
        DISABLED
    }

    /**
     * How the trigger stands on each of {@code tables}, in their order, read in one query: {@link #place} runs inside
     * the cutover's write-blocked window, where a round trip per partition would add up.
     */
    private Map<String, Placed> placed(Connection c, String function, List<String> tables, String scope)
            throws SQLException {
        Map<String, Placed> out = new LinkedHashMap<>();
        for (String t : tables) out.put(t, Placed.MISSING);
        if (tables.isEmpty()) return out;
        List<String> expected = List.of(scope, fence.lockKey(scope));
        try (PreparedStatement ps = c.prepareStatement("SELECT tgrelid::regclass::text, tgenabled::text, tgargs,"
                + " tgfoid = coalesce(to_regprocedure(? || '()'), 0) FROM pg_trigger"
                + " WHERE tgrelid = ANY (?::regclass[]) AND tgname = ?")) {
            ps.setString(1, function);
            ps.setArray(2, c.createArrayOf("text", tables.toArray()));
            ps.setString(3, name);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    // tgargs: each argument followed by a NUL byte
                    List<String> args = List.of(new String(rs.getBytes(3), StandardCharsets.UTF_8).split("\0"));
                    Placed p = !rs.getBoolean(4) || !args.equals(expected)
                            ? Placed.OTHER
                            : "A".equals(rs.getString(2)) ? Placed.ENABLED : Placed.DISABLED;
                    out.replace(rs.getString(1), p);
                }
            }
        }
        return out;
    }

    /** {@code table}, and its partitions at every level when it is partitioned. */
    private static List<String> tables(Connection c, String table) throws SQLException {
        List<String> out = new ArrayList<>();
        // every name as regclass prints it, so the names match pg_trigger's (placed)
        try (PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?)::text, relid::regclass::text"
                + " FROM (SELECT 1) one LEFT JOIN pg_partition_tree(to_regclass(?)) ON true ORDER BY level")) {
            ps.setString(1, table);
            ps.setString(2, table);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    if (rs.getString(1) == null) return out; // dropped (the table retired): nothing left to guard
                    // not partitioned: pg_partition_tree returns nothing, and the table is the one to guard
                    out.add(rs.getString(2) != null ? rs.getString(2) : rs.getString(1));
                }
            }
        }
        return out;
    }

    private static String quoted(String identifier) {
        return identifier.matches("[a-z_][a-z0-9_$]*") ? identifier : "\"" + identifier.replace("\"", "\"\"") + "\"";
    }

    static String literal(String s) {
        return "'" + s.replace("'", "''") + "'";
    }

    private static String load() {
        try (InputStream in = FenceTrigger.class.getResourceAsStream("fence-trigger.sql")) {
            if (in == null) throw new IllegalStateException("fence-trigger.sql is missing from the classpath");
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
