package io.rebalance.verifier;

import io.rebalance.core.slot.KeyRanges;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.source.PartRows;
import io.rebalance.core.source.SourceTable;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * The Postgres side of verification. Each method is one query evaluated by the server: a slot's fingerprint, the
 * fingerprints of parts of a slot, or (only for small parts, where the differences are) per-row hashes. Row data
 * leaves Postgres only for rows already known to differ ({@link #tokens}). Connections are {@code SourceSession}'s,
 * whose pinned settings (TimeZone UTC, float digits) the expressions rely on.
 */
final class SourceFingerprints {
    private final SourceTable table;
    private final String key;
    private final String keyOperand;
    private final String rowHash;
    private final String from;
    private final List<String> tokenColumns;
    private final RowHash hash;
    /** The rows compared: every row, or those of some parts (set before the first query). */
    private String rows = "";

    SourceFingerprints(SourceTable table, CanonicalSql sql, RowHash hash) {
        this.table = table;
        this.key = table.key().selectText("");
        this.keyOperand = KeyOrder.sqlOperand(table.key());
        this.hash = hash;
        this.rowHash = hash.sql(sql.row(table.columns()));
        this.from = sql.from(table.name(), table.columns());
        this.tokenColumns = sql.columns(table.columns());
    }

    /** Compares only {@code rows} from here on (a table moved part by part: the parts Postgres still keeps). */
    void only(PartRows rows) {
        this.rows = rows.andSql();
    }

    /** The row hash of an item's canonical text, as this side's SQL computes a row's. */
    long hashOf(String canonical) {
        return hash.of(canonical);
    }

    /**
     * The WAL position a read on {@code c} sees now: a change committed before it is in any later read. On a hot
     * standby, the position it has replayed.
     */
    static String walLsn(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT (CASE WHEN pg_is_in_recovery()"
                        + " THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END)::text");
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getString(1);
        }
    }

    Fingerprint slot(Connection c, Slot slot) throws SQLException {
        return slot(c, slot, 0);
    }

    private Fingerprint slot(Connection c, Slot slot, int timeoutSeconds) throws SQLException {
        String sql = "SELECT count(*), coalesce(sum(" + rowHash + "), 0)::text FROM " + from + " WHERE "
                + table.keyspace().predicate(slot) + rows;
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setQueryTimeout(timeoutSeconds);
            bindSlot(ps, 1, slot);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return Fingerprint.ofSql(rs.getLong(1), rs.getString(2));
            }
        }
    }

    /**
     * Whether the table holds fewer than {@code limit} rows: false at once when the planner's estimate says it holds
     * at least that many (a dense table pays one catalog lookup), else counted up to {@code limit} rows and no further.
     */
    boolean fewerRowsThan(Connection c, long limit) throws SQLException {
        if (plannerRows(c) >= limit) return false;
        return rowsUpTo(c, limit) < limit;
    }

    /**
     * The table's rows by the planner, or, where a table was never analyzed, its rows counted up to {@code limit};
     * {@link Long#MAX_VALUE} when there are at least that many.
     */
    long rowEstimate(Connection c, long limit) throws SQLException {
        double planned = plannerRows(c);
        if (planned > 0) return (long) planned;
        long counted = rowsUpTo(c, limit);
        return counted < limit ? counted : Long.MAX_VALUE;
    }

    /**
     * The planner's count of the table's rows ({@code reltuples}, a partitioned table's leaves summed); 0 or less when
     * it has none: -1 for a table never analyzed, and 0 is what Postgres 13 and older say then.
     */
    private double plannerRows(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT CASE WHEN bool_or(reltuples < 0) THEN -1 ELSE"
                + " sum(reltuples) END FROM pg_class WHERE oid = CAST(? AS regclass) AND relkind <> 'p' OR oid IN"
                + " (SELECT relid FROM pg_partition_tree(CAST(? AS regclass)) WHERE isleaf)")) {
            ps.setString(1, table.name());
            ps.setString(2, table.name());
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getDouble(1) : -1;
            }
        }
    }

    /** The table's rows, counted up to {@code limit} and no further. */
    private long rowsUpTo(Connection c, long limit) throws SQLException {
        try (PreparedStatement ps =
                c.prepareStatement("SELECT count(*) FROM (SELECT 1 FROM " + table.name() + " LIMIT ?) r")) {
            ps.setLong(1, limit);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /**
     * The fingerprint of every hour from {@code oldest} to {@code newest} that holds rows, in one query: each row's
     * hour is found by {@code width_bucket} over the hours' lower bounds (a binary search), so the query costs what
     * its rows cost, however many hours are empty. Hours without rows are absent from the result.
     */
    Map<Slot, Fingerprint> hours(Connection c, Slot oldest, Slot newest) throws SQLException {
        return hours(c, oldest, newest, 0);
    }

    /** As {@link #hours(Connection, Slot, Slot)}, cancelled after {@code timeoutSeconds} (0: never). */
    Map<Slot, Fingerprint> hours(Connection c, Slot oldest, Slot newest, int timeoutSeconds) throws SQLException {
        List<Slot> span = new ArrayList<>();
        for (Slot s = oldest; !newest.isOlderThan(s); s = s.newer()) span.add(s);
        Map<Slot, Fingerprint> out = new HashMap<>();
        if (table.keyspace() instanceof KeyRanges ranges) {
            if (span.size() > 1 && ranges.bucketable()) return ranges(c, ranges, span, timeoutSeconds);
            // a range scan each: no width_bucket compares a composite key (nor text, in its column's collation)
            for (Slot s : span) {
                Fingerprint f = slot(c, s, timeoutSeconds);
                if (!f.equals(Fingerprint.EMPTY)) out.put(s, f);
            }
            return out;
        }
        try (PreparedStatement ps = c.prepareStatement(hoursSql())) {
            ps.setQueryTimeout(timeoutSeconds);
            bindHours(c, ps, span);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.put(span.get(rs.getInt(1) - 1), Fingerprint.ofSql(rs.getLong(2), rs.getString(3)));
                }
            }
        }
        return out;
    }

    /**
     * The fingerprints of adjacent key ranges in one query, each row's range found by {@code width_bucket} over the
     * cuts between them. Random keys (version 4 uuids) spread a range's rows over the whole table, so a query per range
     * reads most of the table's pages for each (a 15,625-row range of a million read 12,343 pages); one query over the
     * span reads each page once.
     */
    private Map<Slot, Fingerprint> ranges(Connection c, KeyRanges ranges, List<Slot> span, int timeoutSeconds)
            throws SQLException {
        int lo = (int) Math.min(span.get(0).index(), span.get(span.size() - 1).index());
        int hi = (int) Math.max(span.get(0).index(), span.get(span.size() - 1).index());
        String[] lower = ranges.ends(Slot.range(lo));
        String[] upper = ranges.ends(Slot.range(hi));
        String column = ranges.column();
        String type = ranges.boundType();
        String sql = "SELECT b, count(*), sum(h)::text FROM (SELECT width_bucket(" + column + ", (SELECT CAST(CAST(?"
                + " AS text[]) AS " + type + "[]))) AS b, " + rowHash + " AS h FROM " + from + " WHERE true"
                + (lower[0] == null ? "" : " AND " + column + " >= ?")
                + (upper[1] == null ? "" : " AND " + column + " < ?") + rows + OPAQUE + ") r GROUP BY b";
        Map<Slot, Fingerprint> out = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setQueryTimeout(timeoutSeconds);
            // range lo + i holds the keys from cut i (bucket i) up to cut i + 1; below the first cut, bucket 0
            ps.setArray(
                    1, c.createArrayOf("text", ranges.splits().subList(lo, hi).toArray()));
            int p = 2;
            if (lower[0] != null) p = table.key().bind(ps, p, lower[0]);
            if (upper[1] != null) table.key().bind(ps, p, upper[1]);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next())
                    out.put(Slot.range(lo + rs.getLong(1)), Fingerprint.ofSql(rs.getLong(2), rs.getString(3)));
            }
        }
        return out;
    }

    /** The query of {@link #hours}: the hours' bounds as a text array, then the span's lower and upper bound. */
    String hoursSql() {
        var keyspace = table.keyspace();
        String type = keyspace.boundType();
        // the bounds in a sub-select: made once per query (a cast to timestamptz is not folded by the planner)
        return "SELECT b, count(*), sum(h)::text FROM (SELECT width_bucket(CAST(" + keyspace.column() + " AS " + type
                + "), (SELECT CAST(CAST(? AS text[]) AS " + type + "[]))) AS b, " + rowHash + " AS h FROM " + from
                + " WHERE " + keyspace.predicate() + rows + OPAQUE + ") r GROUP BY b";
    }

    /** Binds {@link #hoursSql}'s parameters for the adjacent hours {@code span}, oldest first. */
    void bindHours(Connection c, PreparedStatement ps, List<Slot> span) throws SQLException {
        var keyspace = table.keyspace();
        List<String> bounds = new ArrayList<>(span.size() + 1);
        for (Slot s : span) bounds.add(keyspace.hourBounds(s)[0].toString());
        bounds.add(keyspace.hourBounds(span.get(span.size() - 1))[1].toString());
        ps.setArray(1, c.createArrayOf("text", bounds.toArray()));
        ps.setObject(2, keyspace.hourBounds(span.get(0))[0]);
        ps.setObject(3, keyspace.hourBounds(span.get(span.size() - 1))[1]);
    }

    /**
     * Ends the subquery whose rows a fingerprint groups into hours or parts. Grouping the table's rows directly, the
     * planner counts one group per key (the bucket is computed from the key) and sorts every row first, past work_mem
     * to disk; behind OFFSET 0 it sees no key, counts on a few groups and hashes them, as they are (docs/fingerprint.md).
     */
    static final String OPAQUE = " OFFSET 0";

    /**
     * Fingerprints of {@code splits.size() + 1} consecutive parts of {@code range} in one pass: part 0 holds keys
     * below {@code splits[0]}, part i keys from {@code splits[i-1]} up to {@code splits[i]}, the last the rest.
     */
    List<Fingerprint> parts(Connection c, Slot slot, KeyRange range, List<String> splits) throws SQLException {
        List<Fingerprint> out = new ArrayList<>();
        for (int i = 0; i <= splits.size(); i++) out.add(Fingerprint.EMPTY);
        try (PreparedStatement ps = c.prepareStatement(partsSql(slot, range, splits.size()))) {
            bindParts(ps, slot, range, splits);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) out.set(rs.getInt(1), Fingerprint.ofSql(rs.getLong(2), rs.getString(3)));
            }
        }
        return out;
    }

    /** The query of {@link #parts} with {@code splits} split keys. */
    String partsSql(Slot slot, KeyRange range, int splits) {
        StringBuilder bucket = new StringBuilder("CASE");
        for (int i = 0; i < splits; i++)
            bucket.append(" WHEN ")
                    .append(keyOperand)
                    .append(" < ")
                    .append(table.key().placeholder())
                    .append(" THEN ")
                    .append(i);
        bucket.append(" ELSE ").append(splits).append(" END");
        return "SELECT b, count(*), sum(h)::text FROM (SELECT " + bucket + " AS b, " + rowHash + " AS h FROM " + from
                + " WHERE " + table.keyspace().predicate(slot) + rangePredicate(range) + rows + OPAQUE
                + ") p GROUP BY b";
    }

    /** Binds {@link #partsSql}'s parameters. */
    void bindParts(PreparedStatement ps, Slot slot, KeyRange range, List<String> splits) throws SQLException {
        int p = 1;
        for (String s : splits) p = table.key().bind(ps, p, s);
        p = bindSlot(ps, p, slot);
        bindRange(ps, p, range);
    }

    /** Per-row hashes of one part, keyed by id: ids and 8 bytes per row, used where the differences are. */
    NavigableMap<String, Long> rowHashes(Connection c, Slot slot, KeyRange range) throws SQLException {
        String sql = "SELECT " + key + ", " + rowHash + " FROM " + from + " WHERE "
                + table.keyspace().predicate(slot) + rangePredicate(range) + rows;
        NavigableMap<String, Long> out = new TreeMap<>(KeyOrder.of(table.key()));
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            bindRange(ps, bindSlot(ps, 1, slot), range);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) out.put(rs.getString(1), rs.getLong(2));
            }
        }
        return out;
    }

    /** What a row is now, for the re-check: its hash and whether it (still) belongs to {@code slot}. */
    record RowNow(long hash, boolean inSlot) {}

    /** The rows with these ids, wherever they are now; ids without a row are absent from the result. */
    Map<String, RowNow> now(Connection c, Slot slot, Collection<String> ids) throws SQLException {
        String sql = "SELECT " + key + ", " + rowHash + ", (" + table.keyspace().predicate(slot) + rows + ") FROM "
                + from + " WHERE " + table.key().anyOf("");
        Map<String, RowNow> out = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            int p = bindSlot(ps, 1, slot);
            ps.setArray(p, c.createArrayOf("text", ids.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) out.put(rs.getString(1), new RowNow(rs.getLong(2), rs.getBoolean(3)));
            }
        }
        return out;
    }

    /** A row found by its key: its hash and the text its slot is read from ({@code SlotKeyspace.rowSlot}). */
    record RowAt(long hash, String instant) {}

    /** The rows with these ids, whichever slot they are in; ids without a row are absent from the result. */
    Map<String, RowAt> byKey(Connection c, Collection<String> ids) throws SQLException {
        String sql = "SELECT " + key + ", " + rowHash + ", " + table.keyspace().rowSlotSql(table.name() + ".")
                + " FROM " + from + " WHERE " + table.key().anyOf("");
        Map<String, RowAt> out = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setArray(1, c.createArrayOf("text", ids.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) out.put(rs.getString(1), new RowAt(rs.getLong(2), rs.getString(3)));
            }
        }
        return out;
    }

    /** Per-column canonical tokens of a few rows (those that differ), to name the attributes that differ. */
    Map<String, List<String>> tokens(Connection c, Collection<String> ids) throws SQLException {
        String sql = "SELECT " + key + ", " + String.join(", ", tokenColumns) + " FROM " + from + " WHERE "
                + table.key().anyOf("");
        Map<String, List<String>> out = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setArray(1, c.createArrayOf("text", ids.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    List<String> t = new ArrayList<>(tokenColumns.size());
                    for (int i = 0; i < tokenColumns.size(); i++) t.add(rs.getString(i + 2));
                    out.put(rs.getString(1), t);
                }
            }
        }
        return out;
    }

    private String rangePredicate(KeyRange range) {
        String placeholder = table.key().placeholder();
        return (range.from() == null ? "" : " AND " + keyOperand + " >= " + placeholder)
                + (range.to() == null ? "" : " AND " + keyOperand + " < " + placeholder);
    }

    /** Binds the slot's bounds (two for an hour, none for the no-time slot) at {@code p}; returns the next index. */
    private int bindSlot(PreparedStatement ps, int p, Slot slot) throws SQLException {
        for (Object bound : table.keyspace().bounds(slot)) ps.setObject(p++, bound);
        return p;
    }

    private void bindRange(PreparedStatement ps, int p, KeyRange range) throws SQLException {
        if (range.from() != null) p = table.key().bind(ps, p, range.from());
        if (range.to() != null) table.key().bind(ps, p, range.to());
    }
}
