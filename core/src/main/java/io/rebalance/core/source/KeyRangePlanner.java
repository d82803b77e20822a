package io.rebalance.core.source;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.slot.KeyRangeStore;
import io.rebalance.core.slot.KeyRanges;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.slot.TableKey;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Plans the key ranges of a table whose rows tell no time ({@code slots.timeFrom: none}) so that each holds about
 * {@code slots.rowsPerSlot} rows (0, the default: {@value #AUTO_ROWS}, or fewer so that a table has at least
 * {@value #MIN_RANGES} ranges of 1,000 rows or more). Up to {@value #EXACT_UP_TO} rows (by the statistics) it reads every key in the
 * key's order and cuts at every {@code rowsPerSlot}-th: exact, for one index-only scan. Above, it reads a sample of
 * the table's pages ({@code TABLESAMPLE SYSTEM}, about {@value #SAMPLE_PER_RANGE} keys a range, between {@value
 * #SAMPLE_MIN} and {@value #SAMPLE_MAX} keys) and cuts at its quantiles: a range then holds {@code rowsPerSlot} give
 * or take a few percent, however the keys are spread, because the cuts follow the keys that are there. Reads only.
 */
public final class KeyRangePlanner {
    private static final Logger log = LoggerFactory.getLogger(KeyRangePlanner.class);
    static final long EXACT_UP_TO = 2_000_000;
    static final long SAMPLE_MIN = 200_000;
    static final long SAMPLE_MAX = 2_000_000;
    static final long SAMPLE_PER_RANGE = 100;
    /** {@code slots.rowsPerSlot: 0}: ranges of this many rows, or fewer on a small table ({@link #MIN_RANGES}). */
    public static final long AUTO_ROWS = 100_000;
    /**
     * The ranges an automatic plan makes at least (of 1,000 rows or more): the default 8 workers in 8 processes each
     * hold one, where 10 ranges of a million rows left most workers idle while the last two were copied and verified.
     */
    static final long MIN_RANGES = 64;

    private KeyRangePlanner() {}

    /**
     * @param table the table, quoted and schema-qualified
     * @throws RebalanceException SLOT_PLAN_TOO_LARGE when the table would need more ranges than a plan holds
     */
    public static KeyRanges plan(Connection c, String table, TableKey key, long rowsPerSlot) throws SQLException {
        return plan(c, table, key, rowsPerSlot, EXACT_UP_TO);
    }

    /** @param exactUpTo the rows up to which every key is read, not a sample (a test samples a small table with 0) */
    public static KeyRanges plan(Connection c, String table, TableKey key, long rowsPerSlot, long exactUpTo)
            throws SQLException {
        long estimate = estimate(c, table);
        if (rowsPerSlot == 0) rowsPerSlot = automatic(estimate);
        if (estimate / rowsPerSlot >= Slot.MAX_RANGES) {
            throw new RebalanceException(
                    ErrorCode.CONFIG_INVALID,
                    String.format(
                            Locale.ROOT,
                            "slots.rowsPerSlot=%d would cut %s's %,d rows into more than %,d key ranges; raise"
                                    + " slots.rowsPerSlot to at least %d",
                            rowsPerSlot,
                            table,
                            estimate,
                            Slot.MAX_RANGES - 1,
                            estimate / (Slot.MAX_RANGES - 1) + 1));
        }
        if (estimate <= exactUpTo) return new KeyRanges(key, everyNth(c, table, key, rowsPerSlot), rowsPerSlot);
        long ranges = Math.max(1, Math.round((double) estimate / rowsPerSlot));
        long wanted = Math.min(SAMPLE_MAX, Math.max(SAMPLE_MIN, ranges * SAMPLE_PER_RANGE));
        double percent = Math.min(100.0, 100.0 * wanted / estimate);
        return new KeyRanges(key, quantiles(c, table, key, percent, ranges), rowsPerSlot);
    }

    /** The rows a range holds when {@code slots.rowsPerSlot} is 0: {@link #AUTO_ROWS}, fewer below 64 of them. */
    static long automatic(long estimate) {
        return Math.max(1_000, Math.min(AUTO_ROWS, (estimate + MIN_RANGES - 1) / MIN_RANGES));
    }

    /** The run's key ranges as stored, or, before any process stored them, a plan of them (not stored). */
    static KeyRanges storedOrPlanned(Connection c, MigrationConfig config, String table, TableKey key)
            throws SQLException {
        KeyRangeStore store =
                KeyRangeStore.of(c, table, key, config.redis().keyspace().prefix());
        Optional<KeyRanges> stored = store.load(c);
        if (stored.isPresent()) return stored.get().storedIn(store);
        KeyRanges planned = plan(c, table, key, config.slots().rowsPerSlot());
        return new KeyRanges(key, planned.splits(), planned.rowsPerSlot(), store, false);
    }

    /**
     * Keeps {@code planned} beside the source table, unless another process kept its own first: @return the ranges
     * kept, this plan or that one
     *
     * @throws RebalanceException SOURCE_UNREACHABLE when they cannot be kept (the role lacks CREATE on the schema)
     */
    static KeyRanges keep(Connection c, KeyRanges planned) {
        try {
            KeyRanges kept = planned.store().save(c, planned).storedIn(planned.store());
            log.info(
                    "the run's key ranges: {} ({}..{}), kept in {}",
                    kept.count(),
                    Slot.range(0),
                    Slot.range(kept.count() - 1),
                    planned.store().planTable());
            return kept;
        } catch (SQLException e) {
            throw new RebalanceException(
                    ErrorCode.SOURCE_UNREACHABLE,
                    "the key ranges could not be kept in " + planned.store().planTable() + " (" + e.getMessage()
                            + "); the role needs CREATE on the source table's schema, once, for that one table",
                    e);
        }
    }

    /** The table's rows by the statistics (every partition's), or, never analyzed, counted in 1% of its pages. */
    static long estimate(Connection c, String table) throws SQLException {
        String sql = "SELECT coalesce(sum(greatest(reltuples, 0)), 0)::int8, bool_or(reltuples < 0) FROM pg_class"
                + " WHERE relkind IN ('r', 'm') AND (oid = CAST(? AS regclass)"
                + " OR oid IN (SELECT relid FROM pg_partition_tree(CAST(? AS regclass)) WHERE isleaf))";
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, table);
            ps.setString(2, table);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                if (!rs.getBoolean(2)) return rs.getLong(1);
            }
        }
        try (PreparedStatement ps =
                        c.prepareStatement("SELECT count(*) * 100 FROM " + table + " TABLESAMPLE SYSTEM (1)");
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** Every key in order; a range starts at every {@code n}-th. */
    private static List<String> everyNth(Connection c, String table, TableKey key, long n) throws SQLException {
        List<String> splits = new ArrayList<>();
        read(
                c,
                "SELECT " + key.selectText("src.") + " FROM " + table + " AS src ORDER BY " + key.operandOrder("src."),
                (position, text) -> {
                    if (position > 0 && position % n == 0) splits.add(text);
                });
        return splits;
    }

    /** A sample of the table's pages in key order, cut into {@code ranges} parts of equal size. */
    private static List<String> quantiles(Connection c, String table, TableKey key, double percent, long ranges)
            throws SQLException {
        List<String> sample = new ArrayList<>();
        read(
                c,
                String.format(
                        Locale.ROOT,
                        "SELECT %s FROM %s AS src TABLESAMPLE SYSTEM (%.6f) ORDER BY %s",
                        key.selectText("src."),
                        table,
                        percent,
                        key.operandOrder("src.")),
                (position, text) -> sample.add(text));
        List<String> splits = new ArrayList<>();
        for (long j = 1; j < ranges; j++) {
            String cut = sample.isEmpty() ? null : sample.get((int) (j * sample.size() / ranges));
            if (cut != null
                    && (splits.isEmpty() || !splits.get(splits.size() - 1).equals(cut))) splits.add(cut);
        }
        return splits;
    }

    private interface KeyVisitor {
        void key(long position, String text);
    }

    /** Streams the statement's one text column in pages of 10,000 (a cursor: the keys of a large table stay there). */
    private static void read(Connection c, String sql, KeyVisitor visitor) throws SQLException {
        boolean auto = c.getAutoCommit();
        c.setAutoCommit(false); // the driver streams with a cursor only inside a transaction
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setFetchSize(10_000);
            try (ResultSet rs = ps.executeQuery()) {
                long position = 0;
                while (rs.next()) visitor.key(position++, rs.getString(1));
            }
        } finally {
            c.rollback(); // read only
            c.setAutoCommit(auto);
        }
    }
}
