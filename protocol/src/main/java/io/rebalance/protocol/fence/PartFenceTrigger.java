package io.rebalance.protocol.fence;

import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.part.PartMap;
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
import java.util.Map;
import java.util.Optional;

/**
 * The Postgres fence of a table moved part by part ({@code fence-part-trigger.sql}): where {@link FenceTrigger}
 * refuses every write to the table while its one fence is closed, this refuses only the writes to rows whose part's
 * fence is closed, whoever makes them, and lets every other part's writes through. A row trigger computes the row's
 * part from its partition-key value (the same answer as {@link PartMap#partOf}) and checks that part's fence under
 * its advisory lock; a statement trigger refuses TRUNCATE while any part is fenced. Both are enabled (ALWAYS) while
 * any part's fence is closed and disabled once all are open again, when they cost writers nothing; while enabled, a
 * write to a part on SOURCE pays one index read of the fence table per row.
 *
 * <p>Each part's fence row records the table it guards and the parts it was prepared with ({@code parts}, the written
 * form): the parts cannot change while any part is away from SOURCE ({@link #install} refuses), since the trigger,
 * the tail and the applications must all agree on which part a row is in.
 */
public final class PartFenceTrigger {
    /** The fence row's column holding the parts the scope's table was prepared with. */
    static final String PARTS = "parts";

    private static final String TEMPLATE = load();

    private final PostgresFence fence;
    private final FenceTrigger whole;

    PartFenceTrigger(PostgresFence fence, FenceTrigger whole) {
        this.fence = fence;
        this.whole = whole;
    }

    /** The row trigger's name; the TRUNCATE trigger's is it with {@code _truncate}. */
    public String name() {
        return whole.name() + "_part";
    }

    /**
     * Installs the fence rows of every part (route SOURCE, writer app) unless they exist, the functions, and the
     * triggers on {@code table} and its partitions, enabled when any part's fence is closed. In the caller's
     * transaction; idempotent.
     *
     * @param table the moved table, schema-qualified and quoted as needed
     * @param base the table's scope; a part's scope is {@code base/part}
     * @param column the partition-key column, quoted as needed
     * @throws RebalanceException {@link ErrorCode#PARTS_CHANGED} when other parts were recorded and one is away from
     *     SOURCE; nothing is changed
     */
    public void install(Connection c, String table, String base, PartMap parts, String column) throws SQLException {
        refuseChange(c, base, parts);
        List<String> scopes = parts.scopes(base);
        for (String scope : scopes) fence.install(c, scope);
        try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + fence.table() + " WHERE left(scope, ?) = ?"
                + " AND NOT scope = ANY (?) AND writer = 'app' AND route = 'SOURCE'")) { // parts renamed since
            ps.setInt(1, base.length() + 1);
            ps.setString(2, base + "/");
            ps.setArray(3, c.createArrayOf("text", scopes.toArray()));
            ps.executeUpdate();
        }
        try (Statement s = c.createStatement()) {
            // writers queue behind a trigger's DDL while it waits for the table's lock: bounded, as FenceTrigger does
            s.execute("SET LOCAL lock_timeout = '5s'");
            s.execute(TEMPLATE.replace("${check}", check(c))
                    .replace("${function}", function(c, table))
                    .replace("${fence}", whole.fenceTable(c))
                    .replace("${part_old}", parts.sqlPart("OLD." + column))
                    .replace("${part_new}", parts.sqlPart("NEW." + column)));
        }
        try (PreparedStatement ps = c.prepareStatement("UPDATE " + fence.table() + " SET " + FenceTrigger.GUARDED
                + " = ?, " + PARTS + " = ? WHERE scope = ANY (?)")) {
            ps.setString(1, table);
            ps.setString(2, parts.written());
            ps.setArray(3, c.createArrayOf("text", scopes.toArray()));
            ps.executeUpdate();
        }
        place(c, table, base, parts.names(), anyClosed(c, table));
    }

    /**
     * The parts {@code base}'s table was prepared with, in their written form, and whether any part is away from
     * SOURCE (its fence closed, or its route recorded as TARGET or FINAL); empty when it was never prepared in parts.
     */
    public Optional<Recorded> recorded(Connection c, String base) throws SQLException {
        if (!fence.hasColumn(c, PARTS)) return Optional.empty();
        try (PreparedStatement ps = c.prepareStatement("SELECT max(" + PARTS + "), bool_or(writer <> 'app' OR route"
                + " <> 'SOURCE'), string_agg(scope || ' ' || route, ', ' ORDER BY scope) FROM " + fence.table()
                + " WHERE left(scope, ?) = ? AND " + PARTS + " IS NOT NULL")) {
            ps.setInt(1, base.length() + 1);
            ps.setString(2, base + "/");
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next() || rs.getString(1) == null) return Optional.empty();
                return Optional.of(new Recorded(rs.getString(1), rs.getBoolean(2), rs.getString(3)));
            }
        }
    }

    /**
     * @param parts the written form the parts were prepared with
     * @param moving whether any part is away from SOURCE
     * @param routes each part's scope and route, for a message
     */
    public record Recorded(String parts, boolean moving, String routes) {}

    private void refuseChange(Connection c, String base, PartMap parts) throws SQLException {
        Optional<Recorded> recorded = recorded(c, base);
        if (recorded.isPresent()
                && recorded.get().moving()
                && !recorded.get().parts().equals(parts.written())) {
            throw changed(base, recorded.get(), parts.written());
        }
    }

    /** The refusal of parts that differ from those a part is moving under. */
    public static RebalanceException changed(String base, Recorded recorded, String configured) {
        return new RebalanceException(
                ErrorCode.PARTS_CHANGED,
                "cutover.parts of " + base + " is " + configured + ", but its parts were prepared as "
                        + recorded.parts() + " and not every part is on SOURCE (" + recorded.routes() + "): a row"
                        + " would change part under a move. Put cutover.parts back as it was; change it only once"
                        + " every part is rolled back to SOURCE. Nothing was changed.");
    }

    /** As a part's fence flips, in {@link PostgresFence#set}'s transaction: enables or, once all are open, disables. */
    void follow(Connection c, String table, String scope, boolean closing) throws SQLException {
        String base = scope.substring(0, scope.lastIndexOf('/'));
        List<String> names = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT substr(scope, ?) FROM " + fence.table()
                + " WHERE left(scope, ?) = ? AND " + PARTS + " IS NOT NULL ORDER BY scope")) {
            ps.setInt(1, base.length() + 2);
            ps.setInt(2, base.length() + 1);
            ps.setString(3, base + "/");
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) names.add(rs.getString(1));
            }
        }
        // opening: the row is still closed in this transaction, so the others decide
        place(c, table, base, names, closing || anyClosedBut(c, table, scope));
    }

    private boolean anyClosed(Connection c, String table) throws SQLException {
        return anyClosedBut(c, table, "");
    }

    private boolean anyClosedBut(Connection c, String table, String scope) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT EXISTS (SELECT 1 FROM " + fence.table() + " WHERE "
                + FenceTrigger.GUARDED + " = ? AND " + PARTS + " IS NOT NULL AND writer <> 'app' AND scope <> ?)")) {
            ps.setString(1, table);
            ps.setString(2, scope);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }

    /**
     * Where the triggers are not as the part's fence needs them: while it admits no application, the table and each
     * partition must have both enabled ALWAYS (a partition attached since, or a trigger someone disabled, would let
     * writes past); while it admits them, the next flip creates what is missing.
     *
     * @return empty when every one is as it should be; otherwise the tables that are not, each with why
     */
    public List<String> gaps(Connection c, String table, String scope) throws SQLException {
        boolean closed =
                fence.find(c, scope).map(f -> f.writer() != FenceWriter.APP).orElse(false);
        if (!closed) return List.of();
        Map<String, Boolean> placed = placed(c, table);
        List<String> gaps = new ArrayList<>();
        for (Map.Entry<String, String> t : kinds(c, table).entrySet()) {
            List<String> names = "p".equals(t.getValue()) ? List.of("_truncate") : List.of("", "_truncate");
            for (String suffix : names) {
                Boolean enabled = placed.get(t.getKey() + " " + name() + suffix);
                if (enabled == null) gaps.add(t.getKey() + " has no trigger " + name() + suffix);
                else if (!enabled) gaps.add(t.getKey() + "'s trigger " + name() + suffix + " is not enabled ALWAYS");
            }
        }
        return gaps;
    }

    /** Whether the part's fence is in force on every table: closed, and both triggers enabled ALWAYS on each. */
    public boolean enforced(Connection c, String table, String scope) throws SQLException {
        boolean closed =
                fence.find(c, scope).map(f -> f.writer() != FenceWriter.APP).orElse(false);
        return closed && gaps(c, table, scope).isEmpty();
    }

    /** Creates what is missing and enables or disables both triggers on {@code table} and its partitions. */
    private void place(Connection c, String table, String base, List<String> names, boolean enabled)
            throws SQLException {
        String function = function(c, table);
        String args = "(" + FenceTrigger.literal(base) + ", " + FenceTrigger.literal(fence.lockPrefix()) + ", "
                + FenceTrigger.literal("{" + String.join(",", names) + "}") + ")";
        Map<String, Boolean> placed = placed(c, table);
        try (Statement s = c.createStatement()) {
            for (Map.Entry<String, String> t : kinds(c, table).entrySet()) {
                String name = t.getKey();
                boolean partitioned = "p".equals(t.getValue());
                // a row trigger on a partitioned table is cloned to its partitions; each leaf gets its own here
                List<String[]> triggers = new ArrayList<>();
                if (!partitioned) triggers.add(new String[] {name(), "BEFORE INSERT OR UPDATE OR DELETE", "ROW"});
                triggers.add(new String[] {name() + "_truncate", "BEFORE TRUNCATE", "STATEMENT"});
                for (String[] trigger : triggers) {
                    Boolean now = placed.get(name + " " + trigger[0]);
                    if (now != null && now == enabled) continue; // as it should be: no DDL, no lock taken
                    if (now == null) {
                        s.execute("CREATE TRIGGER " + trigger[0] + " " + trigger[1] + " ON " + name + " FOR EACH "
                                + trigger[2] + " EXECUTE FUNCTION " + function + args);
                    }
                    s.execute("ALTER TABLE " + name + (enabled ? " ENABLE ALWAYS" : " DISABLE") + " TRIGGER "
                            + trigger[0]);
                }
            }
        }
    }

    /** Per {@code "table trigger"}: whether it is enabled ALWAYS; absent when it does not exist. */
    private Map<String, Boolean> placed(Connection c, String table) throws SQLException {
        Map<String, Boolean> out = new LinkedHashMap<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT tgrelid::regclass::text, tgname, tgenabled = 'A'"
                + " FROM pg_trigger WHERE tgrelid = ANY (?::regclass[]) AND tgname IN (?, ?) AND NOT tgisinternal")) {
            ps.setArray(1, c.createArrayOf("text", kinds(c, table).keySet().toArray()));
            ps.setString(2, name());
            ps.setString(3, name() + "_truncate");
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) out.put(rs.getString(1) + " " + rs.getString(2), rs.getBoolean(3));
            }
        }
        return out;
    }

    /** {@code table} and its partitions at every level, each with its relkind ({@code p} when partitioned). */
    private static Map<String, String> kinds(Connection c, String table) throws SQLException {
        Map<String, String> out = new LinkedHashMap<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT r.oid::regclass::text, r.relkind::text FROM pg_class r"
                + " WHERE r.oid = to_regclass(?) OR r.oid IN (SELECT relid FROM pg_partition_tree(to_regclass(?)))"
                + " ORDER BY r.relkind DESC, 1")) {
            ps.setString(1, table);
            ps.setString(2, table);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) out.put(rs.getString(1), rs.getString(2));
            }
        }
        return out;
    }

    /** Removes both triggers from {@code table} and its partitions, and the table's function. */
    public void remove(Connection c, String table) throws SQLException {
        try (Statement s = c.createStatement()) {
            for (String t : kinds(c, table).keySet()) {
                s.execute("DROP TRIGGER IF EXISTS " + name() + " ON " + t);
                s.execute("DROP TRIGGER IF EXISTS " + name() + "_truncate ON " + t);
            }
            s.execute("DROP FUNCTION IF EXISTS " + function(c, table) + "()");
        }
    }

    /** The check of one part's fence, beside the fence table. */
    private String check(Connection c) throws SQLException {
        return whole.besideFence(c, "_part_check");
    }

    /** The table's own trigger function (its parts are written into it), beside the fence table. */
    private String function(Connection c, String table) throws SQLException {
        String id = Integer.toHexString(table.hashCode() & 0x7fffffff);
        return whole.besideFence(c, "_part_" + id);
    }

    private static String load() {
        try (InputStream in = PartFenceTrigger.class.getResourceAsStream("fence-part-trigger.sql")) {
            if (in == null) throw new IllegalStateException("fence-part-trigger.sql is missing from the classpath");
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
