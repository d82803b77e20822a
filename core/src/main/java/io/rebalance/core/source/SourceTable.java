package io.rebalance.core.source;

import io.rebalance.core.codec.ColumnKind;
import io.rebalance.core.codec.ColumnSpec;
import io.rebalance.core.codec.RowCodec;
import io.rebalance.core.codec.RowDecoder;
import io.rebalance.core.codec.RowSlot;
import io.rebalance.core.codec.ValueCodec;
import io.rebalance.core.codec.ValueRefusedException;
import io.rebalance.core.config.IdFormat;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.slot.KeyRanges;
import io.rebalance.core.slot.KeyType;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.slot.SlotKeyspace;
import io.rebalance.core.slot.TableKey;
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
import java.util.function.Predicate;

/**
 * The source table as found in the catalog, checked against the configuration: it exists, the named columns exist,
 * the key is a unique column of a type that can be slotted and paged, and the slot mapping fits the key. Every
 * failure names the object, what was found, and the fix; nothing is written before this passes.
 *
 * @param name the table, quoted and schema-qualified as resolved by Postgres
 * @param columns the columns copied, in table order
 * @param key the row key: one column or two ({@link TableKey})
 * @param uniqueKey the columns of the unique index of the key: the key's own, or on a partitioned table the key's
 *     and the partition key's
 */
public record SourceTable(
        String name, List<ColumnSpec> columns, TableKey key, SlotKeyspace keyspace, List<String> uniqueKey) {

    public SourceTable(String name, List<ColumnSpec> columns, TableKey key, SlotKeyspace keyspace) {
        this(name, columns, key, keyspace, key.columns());
    }

    public static SourceTable inspect(Connection c, MigrationConfig config) {
        return inspect(c, config, true);
    }

    /**
     * The table's columns as {@link #schema()} gives them, checked as {@link #inspect} checks them, without reading
     * its key ranges: what a watch of the schema asks every second.
     */
    public static List<String> schemaOf(Connection c, MigrationConfig config) {
        return inspect(c, config, false).schema();
    }

    private static SourceTable inspect(Connection c, MigrationConfig config, boolean ranges) {
        try {
            return inspectOrThrow(c, config, ranges);
        } catch (SQLException e) {
            throw new RebalanceException(
                    ErrorCode.SOURCE_UNREACHABLE,
                    "could not read the catalog of " + config.source().table() + ": " + e.getMessage(),
                    e);
        }
    }

    private static SourceTable inspectOrThrow(Connection c, MigrationConfig config, boolean ranges)
            throws SQLException {
        var src = config.source();
        String regclass = regclass(c, src.table());
        if (regclass == null) {
            List<String> near = NearTables.to(c, src.table());
            throw new RebalanceException(
                    ErrorCode.SOURCE_TABLE_MISSING,
                    "source table '" + src.table() + "' does not exist in " + c.getCatalog() + "; set source.table"
                            + " (REBALANCE_SOURCE_TABLE) to one that does"
                            + (near.isEmpty()
                                    ? " (the database has no table outside the system schemas), or create it"
                                    : " (nearest: " + String.join(", ", near) + "), or create it"));
        }
        Map<String, ColumnSpec> all = columns(c, regclass);
        List<String> wanted = src.columns().isEmpty() ? new ArrayList<>(all.keySet()) : src.columns();
        for (String col : wanted) {
            if (!all.containsKey(col)) throw missingColumn("source.columns", col, regclass, all);
        }
        String keySetting = "source.keyColumns";
        for (String col : src.namedKey()) {
            if (!all.containsKey(col)) throw missingColumn(keySetting, col, regclass, all);
        }
        KeyIndexes.Found found = KeyIndexes.read(c, regclass).keyOf(regclass, src.namedKey(), keySetting, col -> {
            ColumnSpec spec = all.get(col);
            return spec != null && !spec.array() && KeyType.ofTypname(spec.typname()) != null;
        });
        List<String> keyColumns = found.key();
        List<KeyType> types = new ArrayList<>();
        for (String col : keyColumns) {
            if (!wanted.contains(col)) {
                throw new RebalanceException(
                        ErrorCode.CONFIG_INVALID,
                        "source.columns " + src.columns() + " leaves out the key column '" + col + "' of " + regclass
                                + "; add it, or leave source.columns empty to copy every column");
            }
            if (col.contains(",") || col.contains(":") || col.contains(";")) {
                throw new RebalanceException(
                        ErrorCode.SOURCE_KEY_TYPE,
                        "key column \"" + col + "\" of " + regclass + " has a comma, colon or semicolon in its name,"
                                + " which the change stream's key setting cannot carry; rename the column");
            }
            types.add(keyType(c, regclass, all.get(col)));
        }
        TableKey key = new TableKey(keyColumns, types, attributes(config.target(), keyColumns, regclass));
        KeyType keyType = key.timeType();
        checkMapping(config, regclass, key.timeColumn(), keyType, all);
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
        SlotKeyspace keyspace = config.slots().keyRanges()
                ? (ranges
                        ? KeyRangePlanner.storedOrPlanned(c, config, regclass, key)
                        : new KeyRanges(key, List.of(), config.slots().rowsPerSlot()))
                : SlotKeyspace.of(config, key.timeColumn(), keyType, keyColumns.size());
        return new SourceTable(regclass, copied, key, keyspace, found.unique());
    }

    /** This table with the key ranges {@code ranges} (once a process stored them). */
    public SourceTable withKeyspace(SlotKeyspace ranges) {
        return new SourceTable(name, columns, key, ranges, uniqueKey);
    }

    /**
     * This table with its key ranges kept beside it: the plan {@link #inspect} made, unless another process kept its
     * own first (then that one). Ranges never change once kept, so every item's slot stays where it was written. The
     * first write a part makes to the source; hours need none.
     *
     * @throws RebalanceException SOURCE_UNREACHABLE when they cannot be kept (the role lacks CREATE on the schema)
     */
    public SourceTable keepRanges(Connection c) {
        if (!(keyspace instanceof KeyRanges planned) || planned.stored()) return this;
        return withKeyspace(KeyRangePlanner.keep(c, planned));
    }

    /** The type family of a key column, or a refusal naming the column and what would work. */
    private static KeyType keyType(Connection c, String regclass, ColumnSpec col) throws SQLException {
        KeyType keyType = col.array() ? null : KeyType.ofTypname(col.typname());
        if (keyType == null) {
            throw new RebalanceException(
                    ErrorCode.SOURCE_KEY_TYPE,
                    "key column " + col.name() + " of " + regclass + " is " + col.sqlType() + "; rebalance pages by"
                            + " the key and needs text/varchar (ULID), uuid (ULID bits) or bigint (time-ordered ids)");
        }
        if (col.typname().equals("bpchar")) {
            String type = formatType(c, regclass, col.name());
            throw new RebalanceException(
                    ErrorCode.SOURCE_KEY_TYPE,
                    "key column " + col.name() + " of " + regclass + " is " + type + ": Postgres drops a"
                            + " character(n) value's trailing padding when it compares or casts it, so a key would not"
                            + " come back as it was written. Change the column to text (ALTER TABLE " + regclass
                            + " ALTER COLUMN " + SlotKeyspace.quote(col.name()) + " TYPE text, which rewrites the"
                            + " table) or varchar, then run the command again");
        }
        return keyType;
    }

    /** The DynamoDB attribute of each key column: target.partitionKey and target.sortKey, or the columns' names. */
    private static List<String> attributes(MigrationConfig.Target target, List<String> keyColumns, String regclass) {
        if (keyColumns.size() == 1 && !target.sortKey().isEmpty()) {
            throw new RebalanceException(
                    ErrorCode.CONFIG_INVALID,
                    "target.sortKey is '" + target.sortKey() + "', but the key of " + regclass + " is the one column "
                            + keyColumns.get(0) + "; leave target.sortKey empty (a sort key holds a two-column key's"
                            + " second column)");
        }
        List<String> out = new ArrayList<>();
        out.add(target.partitionKey().isEmpty() ? keyColumns.get(0) : target.partitionKey());
        if (keyColumns.size() == 2) out.add(target.sortKey().isEmpty() ? keyColumns.get(1) : target.sortKey());
        if (out.size() == 2 && out.get(0).equals(out.get(1))) {
            throw new RebalanceException(
                    ErrorCode.CONFIG_INVALID,
                    "target.partitionKey and target.sortKey are both '" + out.get(0) + "'; name two attributes");
        }
        for (String a : out) {
            if (a.contains(",")) {
                throw new RebalanceException(
                        ErrorCode.CONFIG_INVALID,
                        "the key attribute '" + a + "' has a comma, which the log of written keys separates"
                                + " attributes by; set target.partitionKey/target.sortKey to names without one");
            }
        }
        return out;
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
            Predicate<ColumnKind> fits) {
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
            MigrationConfig config, String table, String timeColumn, KeyType keyType, Map<String, ColumnSpec> all) {
        var slots = config.slots();
        if (slots.keyRanges()) return; // any key type orders: ranges need no time in it
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
        IdFormat format = slots.idFormat();
        if (format == IdFormat.SNOWFLAKE && keyType != KeyType.BIGINT) {
            throw new RebalanceException(
                    ErrorCode.SOURCE_KEY_TYPE,
                    "slots.idFormat is snowflake but key column "
                            + timeColumn
                            + " is not an integer; use idFormat ulid, or slots.timeFrom: column");
        }
        if (format == IdFormat.ULID && keyType == KeyType.BIGINT) {
            throw new RebalanceException(
                    ErrorCode.SOURCE_KEY_TYPE,
                    "slots.idFormat is ulid but key column " + timeColumn
                            + " is an integer; use idFormat snowflake where it holds time-ordered ids, slots.timeFrom:"
                            + " none where nothing in a row tells time (a sequence: ranges of the key), or"
                            + " slots.timeFrom: column");
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

    /** The DynamoDB partition key attribute: {@code target.partitionKey}, or the key's first column's name. */
    public String partitionKey() {
        return key.partitionAttribute();
    }

    /** The codec for this table and target: every part that writes items builds them with this. */
    public RowCodec codec(MigrationConfig.Target target) {
        return new RowCodec(columns, key, target.forms(), SlotIndex.of(target), rowSlot());
    }

    /** The inverse of {@link #codec}: items back to this table's rows (the reverse stream, ADR 7). */
    public RowDecoder decoder(MigrationConfig.Target target) {
        return new RowDecoder(columns, key, target.forms(), SlotIndex.of(target).attribute());
    }

    /** The slot of a row as read by {@link PageReader}: from its id, its time column, or the range it was read in. */
    public RowSlot rowSlot() {
        if (keyspace instanceof KeyRanges) {
            return row -> {
                if (row.slot() == null) throw new IllegalStateException("a row of key ranges read without its range");
                return row.slot();
            };
        }
        if (!(keyspace instanceof SlotKeyspace.TimeColumn tc)) {
            return row -> keyspace.slotOfKey(row.key()).orElseThrow();
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
