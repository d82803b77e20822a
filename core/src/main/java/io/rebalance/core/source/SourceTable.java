package io.rebalance.core.source;

import io.rebalance.core.codec.ColumnKind;
import io.rebalance.core.codec.ColumnSpec;
import io.rebalance.core.codec.RowCodec;
import io.rebalance.core.codec.RowDecoder;
import io.rebalance.core.codec.RowSlot;
import io.rebalance.core.codec.ValueCodec;
import io.rebalance.core.codec.ValueRefusedException;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.slot.KeyType;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.slot.SlotKeyspace;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The source table as found in the catalog, checked against the configuration: it exists, the named columns exist,
 * the key is a unique column of a type that can be slotted and paged, and the slot mapping fits the key. Every
 * failure names the object, what was found, and the fix; nothing is written before this passes.
 *
 * @param name the table, quoted and schema-qualified as resolved by Postgres
 * @param columns the columns copied, in table order
 * @param uniqueKey the columns of the unique index the key column starts: the key alone, or on a partitioned table
 *     the key and the partition key
 */
public record SourceTable(
        String name,
        List<ColumnSpec> columns,
        String keyColumn,
        KeyType keyType,
        SlotKeyspace keyspace,
        List<String> uniqueKey) {

    public SourceTable(
            String name, List<ColumnSpec> columns, String keyColumn, KeyType keyType, SlotKeyspace keyspace) {
        this(name, columns, keyColumn, keyType, keyspace, List.of(keyColumn));
    }

    public static SourceTable inspect(Connection c, MigrationConfig config) {
        try {
            return inspectOrThrow(c, config);
        } catch (SQLException e) {
            throw new RebalanceException(
                    ErrorCode.SOURCE_UNREACHABLE,
                    "could not read the catalog of " + config.source().table() + ": " + e.getMessage(),
                    e);
        }
    }

    private static SourceTable inspectOrThrow(Connection c, MigrationConfig config) throws SQLException {
        var src = config.source();
        String regclass = regclass(c, src.table());
        if (regclass == null) {
            throw new RebalanceException(
                    ErrorCode.SOURCE_TABLE_MISSING,
                    "source table '" + src.table() + "' does not exist in " + c.getCatalog() + "; create it, or set"
                            + " source.table (REBALANCE_SOURCE_TABLE) to an existing table such as public.room_events");
        }
        Map<String, ColumnSpec> all = columns(c, regclass);
        List<String> wanted = src.columns().isEmpty() ? new ArrayList<>(all.keySet()) : src.columns();
        for (String col : wanted) {
            if (!all.containsKey(col)) throw missingColumn("source.columns", col, regclass, all);
        }
        if (!all.containsKey(src.keyColumn())) throw missingColumn("source.keyColumn", src.keyColumn(), regclass, all);
        ColumnSpec key = all.get(src.keyColumn());
        KeyType keyType = key.array() ? null : KeyType.ofTypname(key.typname());
        if (keyType == null) {
            throw new RebalanceException(
                    ErrorCode.SOURCE_KEY_TYPE,
                    "key column " + src.keyColumn() + " of " + regclass + " is " + key.sqlType()
                            + "; rebalance pages by"
                            + " the key and needs text/varchar (ULID), uuid (ULID bits) or bigint (time-ordered ids)");
        }
        if (key.typname().equals("bpchar")) {
            String type = formatType(c, regclass, src.keyColumn());
            throw new RebalanceException(
                    ErrorCode.SOURCE_KEY_TYPE,
                    "key column " + src.keyColumn() + " of " + regclass + " is " + type + ": Postgres drops a"
                            + " character(n) value's trailing padding when it compares or casts it, so a key would not"
                            + " come back as it was written. Change the column to text (ALTER TABLE " + regclass
                            + " ALTER COLUMN " + SlotKeyspace.quote(src.keyColumn()) + " TYPE text, which rewrites the"
                            + " table) or varchar, then run the command again");
        }
        List<String> uniqueKey = uniqueKey(c, regclass, src.keyColumn());
        if (uniqueKey.isEmpty()) {
            throw new RebalanceException(
                    ErrorCode.SOURCE_KEY_TYPE,
                    "key column " + src.keyColumn() + " of " + regclass + " has no unique index that starts with it;"
                            + " keyset paging needs a unique key: make it the primary key (on a partitioned table,"
                            + " PRIMARY KEY (" + src.keyColumn() + ", <the partition key>)), or set source.keyColumn"
                            + " to the primary key column");
        }
        checkMapping(config, regclass, keyType, all);
        if (config.slots().fromColumn() && !wanted.contains(config.slots().timeColumn())) {
            throw new RebalanceException(
                    ErrorCode.SOURCE_COLUMN_MISSING,
                    "slots.timeColumn " + config.slots().timeColumn() + " is not among source.columns " + src.columns()
                            + "; add it (each item records its slot, computed from that column)");
        }
        List<ColumnSpec> copied =
                all.values().stream().filter(col -> wanted.contains(col.name())).toList();
        String slotAttribute = config.target().slotAttribute();
        if (copied.stream().anyMatch(col -> col.name().equals(slotAttribute))) {
            throw new RebalanceException(
                    ErrorCode.CONFIG_INVALID,
                    "column " + slotAttribute + " of " + regclass + " has the name of the slot attribute"
                            + " (target.slotAttribute); set target.slotAttribute to a name no column has");
        }
        checkForms(
                "target.jsonAsString",
                config.target().jsonAsString(),
                copied,
                regclass,
                "json or jsonb",
                k -> k == ColumnKind.JSON);
        checkForms(
                "target.numbersAsString",
                config.target().numbersAsString(),
                copied,
                regclass,
                "numeric or float",
                k -> k == ColumnKind.NUMERIC || k == ColumnKind.FLOAT);
        return new SourceTable(regclass, copied, src.keyColumn(), keyType, SlotKeyspace.of(config, keyType), uniqueKey);
    }

    /** The column's type as Postgres writes it, with its length: {@code character(30)}. */
    private static String formatType(Connection c, String regclass, String column) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
                + " WHERE attrelid = ?::regclass AND attname = ?")) {
            ps.setString(1, regclass);
            ps.setString(2, column);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : "character(n)";
            }
        }
    }

    /** Every column a form setting names is a copied column of the kind the setting is for. */
    private static void checkForms(
            String key,
            List<String> named,
            List<ColumnSpec> copied,
            String table,
            String kindName,
            java.util.function.Predicate<ColumnKind> fits) {
        List<String> fitting = copied.stream()
                .filter(c -> fits.test(c.kind()))
                .map(ColumnSpec::name)
                .toList();
        for (String name : named) {
            if (!fitting.contains(name)) {
                throw new RebalanceException(
                        ErrorCode.CONFIG_INVALID,
                        key + " names '" + name + "', which is no copied " + kindName + " column of " + table
                                + "; name one of " + fitting + " (docs/codec.md)");
            }
        }
    }

    private static void checkMapping(
            MigrationConfig config, String table, KeyType keyType, Map<String, ColumnSpec> all) {
        var slots = config.slots();
        if (slots.fromColumn()) {
            ColumnSpec tc = all.get(slots.timeColumn());
            if (tc == null) throw missingColumn("slots.timeColumn", slots.timeColumn(), table, all);
            if (tc.array() || (tc.kind() != ColumnKind.TIMESTAMP && tc.kind() != ColumnKind.TIMESTAMPTZ)) {
                throw new RebalanceException(
                        ErrorCode.SOURCE_KEY_TYPE,
                        "slots.timeColumn " + slots.timeColumn() + " is " + tc.sqlType()
                                + "; it must be timestamp or timestamptz");
            }
            return;
        }
        String format = slots.idFormat();
        if (format.equals("snowflake") && keyType != KeyType.BIGINT) {
            throw new RebalanceException(
                    ErrorCode.SOURCE_KEY_TYPE,
                    "slots.idFormat is snowflake but key column "
                            + config.source().keyColumn()
                            + " is not an integer; use idFormat ulid, or slots.timeFrom: column");
        }
        if (format.equals("ulid") && keyType == KeyType.BIGINT) {
            throw new RebalanceException(
                    ErrorCode.SOURCE_KEY_TYPE,
                    "slots.idFormat is ulid but key column " + config.source().keyColumn()
                            + " is an integer; use idFormat snowflake, or slots.timeFrom: column");
        }
    }

    private static String regclass(Connection c, String table) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?)::text")) {
            ps.setString(1, table);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getString(1);
            }
        }
    }

    private static Map<String, ColumnSpec> columns(Connection c, String table) throws SQLException {
        String sql = "SELECT a.attname, t.typname, t.typcategory = 'A' AND t.typelem <> 0, et.typname"
                + " FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid LEFT JOIN pg_type et ON et.oid = t.typelem"
                + " WHERE a.attrelid = ?::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum";
        Map<String, ColumnSpec> out = new LinkedHashMap<>();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, table);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    String name = rs.getString(1);
                    out.put(
                            name,
                            rs.getBoolean(3)
                                    ? ColumnSpec.arrayOf(name, rs.getString(4))
                                    : ColumnSpec.scalar(name, rs.getString(2)));
                }
            }
        }
        return out;
    }

    /**
     * Whether a unique index, without predicate, starts with the key column and holds nothing else, or, on a
     * partitioned table, nothing but its partition key besides: Postgres requires a partitioned table's unique indexes
     * to include the partition key, so {@code PRIMARY KEY (id, created_at)} is the usual key of a table partitioned
     * by month. Then the key alone is unique only by the ids' making (ULIDs and time-ordered ids are); the index
     * still serves the key ranges the copy reads. Two rows of one id would be one item: verify reports such a slot.
     */
    private static List<String> uniqueKey(Connection c, String table, String column) throws SQLException {
        String sql = "SELECT (SELECT array_agg(ka.attname::text ORDER BY k.n) FROM unnest(i.indkey::int2[]) WITH"
                + " ORDINALITY k(attnum, n) JOIN pg_attribute ka ON ka.attrelid = i.indrelid AND ka.attnum = k.attnum"
                + " WHERE k.n <= i.indnkeyatts) FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]"
                + " LEFT JOIN pg_partitioned_table p ON p.partrelid = i.indrelid"
                + " WHERE i.indrelid = ?::regclass AND i.indisunique AND i.indpred IS NULL AND a.attname = ?"
                + " AND (i.indnkeyatts = 1 OR (p.partrelid IS NOT NULL AND NOT EXISTS (SELECT 1"
                + "   FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(attnum, n)"
                + "   WHERE k.n BETWEEN 2 AND i.indnkeyatts AND NOT k.attnum = ANY(p.partattrs::int2[]))))";
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, table);
            ps.setString(2, column);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) return List.of();
                return List.of((String[]) rs.getArray(1).getArray());
            }
        }
    }

    private static RebalanceException missingColumn(String key, String col, String table, Map<String, ColumnSpec> all) {
        return new RebalanceException(
                ErrorCode.SOURCE_COLUMN_MISSING,
                key + " names column '" + col + "', which " + table + " does not have; its columns are "
                        + String.join(", ", all.keySet()));
    }

    /** The copied columns as {@code name type}, in table order: what a run records and {@link SchemaChange} compares. */
    public List<String> schema() {
        return columns.stream().map(c -> c.name() + " " + c.sqlType()).toList();
    }

    /** The DynamoDB attribute holding the key: {@code target.partitionKey}, or the key column's own name. */
    public String partitionKey(MigrationConfig.Target target) {
        return target.partitionKey().isEmpty() ? keyColumn : target.partitionKey();
    }

    /** The codec for this table and target: every part that writes items builds them with this. */
    public RowCodec codec(MigrationConfig.Target target) {
        return new RowCodec(columns, keyColumn, partitionKey(target), target.forms(), SlotIndex.of(target), rowSlot());
    }

    /** The inverse of {@link #codec}: items back to this table's rows (the reverse stream, ADR 7). */
    public RowDecoder decoder(MigrationConfig.Target target) {
        return new RowDecoder(
                columns,
                keyColumn,
                partitionKey(target),
                target.forms(),
                SlotIndex.of(target).attribute());
    }

    /** The slot of a row as read by {@link PageReader}: from its id, or from its time column. */
    public RowSlot rowSlot() {
        if (!(keyspace instanceof SlotKeyspace.TimeColumn tc)) {
            return row -> Slot.containing(keyspace.instantOf(row.key()));
        }
        int index = -1;
        boolean withZone = false;
        for (int i = 0; i < columns.size(); i++) {
            if (SlotKeyspace.quote(columns.get(i).name()).equals(tc.column())) {
                index = i;
                withZone = columns.get(i).kind() == ColumnKind.TIMESTAMPTZ;
            }
        }
        int at = index;
        boolean zoned = withZone;
        return row -> {
            Object text = row.values()[at];
            if (text == null || "infinity".equals(text) || "-infinity".equals(text)) return Slot.NO_TIME; // no hour
            String iso = ValueCodec.timestamp((String) text, zoned);
            try {
                return Slot.containing(
                        zoned ? Instant.parse(iso) : LocalDateTime.parse(iso).toInstant(ZoneOffset.UTC));
            } catch (DateTimeParseException e) {
                throw new ValueRefusedException("its time column holds '" + text + "', which is in no hour");
            }
        };
    }

    /** The SQL that reads a column in the form the codec expects (see {@link PageReader}). */
    static String selectExpression(ColumnSpec col) {
        String q = SlotKeyspace.quote(col.name());
        // bytea arrives as bytes; bpchar keeps its padding only in its own output (a cast to text trims it).
        if (!col.array() && (col.kind() == ColumnKind.BYTEA || col.typname().equals("bpchar"))) return q;
        return q + "::text";
    }
}
