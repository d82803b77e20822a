package io.rebalance.core.source;

import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

/**
 * A table's unique indexes (plain columns, no predicate, valid and not deferred) and its partition key, from the
 * catalog: what decides the row key. Unset, the key is the primary key, which is unique by construction; named, it
 * must be NOT NULL and unique by an index of exactly its columns. On a partitioned table Postgres makes every unique
 * index include the partition key, so {@code PRIMARY KEY (id, created_at)} is the usual key of a table partitioned by
 * month: there the key is named ({@code source.keyColumns: [id]}), unique by the ids' making (ULIDs and time-ordered ids
 * are), and the upsert's conflict target keeps the partition key (docs/partitioned-tables.md). Which column is
 * unique by its making only the user knows ({@code (device_id, ts)} has the same shape), so it is never guessed. Two
 * rows of one id would be one item: verify reports such a slot.
 */
final class KeyIndexes {
    /** The key's columns, and the unique index's columns: the key's, then any partition key column it adds. */
    record Found(List<String> key, List<String> unique) {}

    private record Index(List<String> columns, boolean primary) {}

    private final List<Index> indexes;
    private final Set<String> partitionColumns;
    private final Set<String> notNull;

    private KeyIndexes(List<Index> indexes, Set<String> partitionColumns, Set<String> notNull) {
        this.indexes = indexes;
        this.partitionColumns = partitionColumns;
        this.notNull = notNull;
    }

    static KeyIndexes read(Connection c, String regclass) throws SQLException {
        String sql = "SELECT (SELECT array_agg(a.attname::text ORDER BY k.n) FROM unnest(i.indkey::int2[]) WITH"
                + " ORDINALITY k(attnum, n) JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum"
                + " WHERE k.n <= i.indnkeyatts), i.indisprimary FROM pg_index i WHERE i.indrelid = ?::regclass"
                + " AND i.indisunique AND i.indisvalid AND i.indimmediate AND i.indpred IS NULL AND i.indexprs IS NULL"
                + " ORDER BY i.indisprimary DESC";
        List<Index> indexes = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, regclass);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next())
                    indexes.add(new Index(List.of((String[]) rs.getArray(1).getArray()), rs.getBoolean(2)));
            }
        }
        Set<String> partition = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT a.attname::text FROM pg_partitioned_table p JOIN"
                + " pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = ANY(p.partattrs::int2[])"
                + " WHERE p.partrelid = ?::regclass")) {
            ps.setString(1, regclass);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) partition.add(rs.getString(1));
            }
        }
        Set<String> notNull = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT attname::text FROM pg_attribute WHERE attrelid ="
                + " ?::regclass AND attnum > 0 AND NOT attisdropped AND attnotnull")) {
            ps.setString(1, regclass);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) notNull.add(rs.getString(1));
            }
        }
        return new KeyIndexes(indexes, partition, notNull);
    }

    /**
     * The key of the table: {@code named} (one or two columns, from {@code setting}), or the primary key when empty.
     *
     * @throws RebalanceException SOURCE_KEY_TYPE naming what the table has and what to set
     */
    Found keyOf(String table, List<String> named, String setting, Predicate<String> keyTyped) {
        if (named.isEmpty()) return primaryKey(table, keyTyped);
        for (String col : named) {
            if (!notNull.contains(col)) {
                throw new RebalanceException(
                        ErrorCode.SOURCE_KEY_TYPE,
                        setting + " names " + col + ", which may be NULL in " + table + ": a row key names every row,"
                                + " and rows whose key is NULL would be one item or none; ALTER TABLE " + table
                                + " ALTER COLUMN " + col + " SET NOT NULL, or name a NOT NULL unique key");
            }
        }
        for (Index index : indexes) {
            if (index.columns().size() == named.size()
                    && Set.copyOf(index.columns()).equals(Set.copyOf(named))) return new Found(named, named);
        }
        for (Index index : indexes) { // a partitioned table's index: the key first, partition columns after
            List<String> rest = index.columns()
                    .subList(
                            Math.min(named.size(), index.columns().size()),
                            index.columns().size());
            if (index.columns().size() > named.size()
                    && Set.copyOf(index.columns().subList(0, named.size())).equals(Set.copyOf(named))
                    && partitionColumns.containsAll(rest)) {
                List<String> unique = new ArrayList<>(named);
                unique.addAll(rest);
                return new Found(named, List.copyOf(unique));
            }
        }
        Index primary = indexes.isEmpty() || !indexes.get(0).primary() ? null : indexes.get(0);
        String has = primary == null
                ? " has no primary key"
                : "'s primary key is (" + String.join(", ", primary.columns()) + ")";
        String way = primary != null && primary.columns().size() <= 2
                ? "leave source.keyColumns unset to use the primary key"
                : "name a unique key of one or two columns in source.keyColumns";
        throw new RebalanceException(
                ErrorCode.SOURCE_KEY_TYPE,
                setting + " names " + String.join(", ", named) + ", which is not unique in " + table + " by an index"
                        + " of its own (" + table + has + "); keyset paging and DynamoDB's key need a unique key: "
                        + way + ", or add a unique index on " + String.join(", ", named));
    }

    /**
     * The primary key, unique by construction, as the key; but where a partitioned table's primary key holds a
     * partition column no key can be of (a timestamp), the key is for the user to name.
     */
    private Found primaryKey(String table, Predicate<String> keyTyped) {
        Index primary = indexes.isEmpty() || !indexes.get(0).primary() ? null : indexes.get(0);
        if (primary == null) {
            throw new RebalanceException(
                    ErrorCode.SOURCE_KEY_TYPE,
                    table + " has no primary key, which is the row key when source.keyColumns is"
                            + " unset; set source.keyColumns to a column with a unique index, or add a primary key");
        }
        List<String> pk = primary.columns();
        List<String> partitionKeys = pk.subList(1, pk.size()).stream()
                .filter(col -> partitionColumns.contains(col) && !keyTyped.test(col))
                .toList();
        if (!partitionKeys.isEmpty()) {
            throw new RebalanceException(
                    ErrorCode.SOURCE_KEY_TYPE,
                    "the primary key of " + table + " is (" + String.join(", ", pk)
                            + "), which holds its partition key "
                            + String.join(", ", partitionKeys) + " because Postgres requires it of a partitioned"
                            + " table's unique keys; name the key in source.keyColumns (a column unique by its making,"
                            + " such as a ULID or time-ordered id: source.keyColumns: [" + pk.get(0) + "]), or two"
                            + " (docs/partitioned-tables.md)");
        }
        if (pk.size() > 2) {
            throw new RebalanceException(
                    ErrorCode.SOURCE_KEY_TYPE,
                    "the primary key of " + table + " is (" + String.join(", ", pk) + "): " + pk.size() + " columns,"
                            + " while a DynamoDB item has a partition key and at most a sort key; set"
                            + " source.keyColumns to two columns that are unique together (with a unique index on"
                            + " them), or to one unique column");
        }
        return new Found(pk, pk);
    }
}
