package io.rebalance.mover;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.codec.ItemSize;
import io.rebalance.core.codec.Refusal;
import io.rebalance.core.codec.RowCodec;
import io.rebalance.core.codec.RowRefusedException;
import io.rebalance.core.codec.SourceRow;
import io.rebalance.core.codec.StorableSql;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.slot.Ulid;
import io.rebalance.core.source.PageReader;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.testkit.TypeZoo;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link StorableSql} is the codec's twin: over every value of the type zoo, the item size Postgres computes equals
 * {@link ItemSize} of the item {@link RowCodec} builds, row by row; and over values at each edge of DynamoDB's limits,
 * Postgres refuses exactly the rows the codec refuses, naming the same column, in each json and number mode.
 */
class StorableSqlIT {
    private static final List<Slot> ZOO_SLOTS =
            List.of(Slot.parse("20241020.01"), Slot.parse("20241020.02"), Slot.parse("20241020.03"));

    private static MoverFixture fixture(String mode) {
        MoverFixture f = new MoverFixture();
        return switch (mode) {
            case "map" -> f.set("target.json", "map");
            case "string" -> f.set("target.json", "string");
            default ->
                f.set("target.json", "map").set("target.jsonAsString", "j,aj").set("target.numbersAsString", "n,f,an");
        };
    }

    @ParameterizedTest
    @ValueSource(strings = {"map", "string"})
    void postgresSizesEveryTypeZooItemAsTheCodecDoes(String mode) throws Exception {
        try (MoverFixture f = fixture(mode)) {
            MigrationConfig config = f.config();
            try (Connection c = new SourceSession(config.source()).open()) {
                TypeZoo.create(c, f.table, 2);
                SourceTable table = SourceTable.inspect(c, config);
                RowCodec codec = table.codec(config.target());
                Map<String, Long> javaSizes = new HashMap<>();
                for (Slot slot : ZOO_SLOTS) {
                    for (SourceRow row : new PageReader(table).page(c, slot, null, 1000)) {
                        javaSizes.put(row.key(), ItemSize.of(codec.encode(row)));
                    }
                }
                Map<String, Object[]> sql = perRow(c, table, config);
                assertThat(sql.keySet()).isEqualTo(javaSizes.keySet());
                List<String> differ = new ArrayList<>();
                javaSizes.forEach((id, size) -> {
                    if (!size.equals(sql.get(id)[0])) differ.add(id + ": codec " + size + ", sql " + sql.get(id)[0]);
                });
                assertThat(differ).isEmpty();
            }
        }
    }

    /** Each row holds one value at an edge; the comment says what the codec does with it in map mode. */
    private static final List<String> EDGES = List.of(
            "1, 1.5, '{\"a\": 1}', NULL, NULL, 'x'", // stored
            "1e126, NULL, NULL, NULL, NULL, NULL", // n: 127 digits before the point, out of range
            "9.99e125, NULL, NULL, NULL, NULL, NULL", // stored: just below 1E126
            "1e-130, NULL, NULL, NULL, NULL, NULL", // stored: the smallest
            "1e-131, NULL, NULL, NULL, NULL, NULL", // n: too small
            "123456789012345678901234567890123456789, NULL, NULL, NULL, NULL, NULL", // n: 39 digits
            "12345678901234567890123456789012345678, NULL, NULL, NULL, NULL, NULL", // stored: 38 digits
            "1234567890123456789012345678901234567800, NULL, NULL, NULL, NULL, NULL", // stored: 38 significant
            "'NaN', 'Infinity', NULL, NULL, NULL, NULL", // stored: as strings
            "NULL, 1e300, NULL, NULL, NULL, NULL", // f: a float out of range
            "NULL, NULL, '{\"v\": 1.5e300}', NULL, NULL, NULL", // j: a json number out of range
            "NULL, NULL, '{\"v\": 0.1234567890123456789012345678901234567891}', NULL, NULL, NULL", // j: 40 digits
            "NULL, NULL, (repeat('[', 32) || repeat(']', 32))::jsonb, NULL, NULL, NULL", // stored: 32 levels
            "NULL, NULL, (repeat('[', 33) || repeat(']', 33))::jsonb, NULL, NULL, NULL", // j: 33 levels
            "NULL, NULL, NULL, ARRAY['{\"v\": 1}'::jsonb, '[1e300]'::jsonb], NULL, NULL", // aj
            "NULL, NULL, NULL, NULL, '{1, 1e200}', NULL", // an
            "NULL, NULL, NULL, NULL, '{{1, 2}, {3, NULL}}', NULL", // stored
            "NULL, NULL, NULL, NULL, NULL, repeat('x', 405000)", // stored: under 400 KB
            "NULL, NULL, NULL, NULL, NULL, repeat('x', 410000)", // the item: over 400 KB
            "1e200, NULL, '{\"v\": 1e300}', NULL, NULL, repeat('x', 500000)"); // n first, as the codec names it

    @ParameterizedTest
    @ValueSource(strings = {"map", "string", "asString"})
    void postgresRefusesExactlyTheRowsTheCodecRefuses(String mode) throws Exception {
        try (MoverFixture f = fixture(mode)) {
            MigrationConfig config = f.config();
            try (Connection c = new SourceSession(config.source()).open()) {
                try (Statement st = c.createStatement()) {
                    st.execute("CREATE TABLE " + f.table + " (id text PRIMARY KEY, n numeric, f float8, j jsonb,"
                            + " aj jsonb[], an numeric[], big text)");
                    for (int i = 0; i < EDGES.size(); i++) {
                        st.execute("INSERT INTO " + f.table + " VALUES ('" + id(i) + "', " + EDGES.get(i) + ")");
                    }
                }
                SourceTable table = SourceTable.inspect(c, config);
                RowCodec codec = table.codec(config.target());
                Map<String, String> javaVerdicts = new HashMap<>();
                Map<String, Long> javaSizes = new HashMap<>();
                for (SourceRow row : new PageReader(table).page(c, Slot.parse("20241020.01"), null, 100)) {
                    try {
                        javaSizes.put(row.key(), ItemSize.of(codec.encode(row)));
                        javaVerdicts.put(row.key(), "stored");
                    } catch (RowRefusedException e) {
                        javaVerdicts.put(row.key(), "refused " + e.column());
                    }
                }
                assertThat(javaVerdicts).hasSize(EDGES.size());
                Map<String, Object[]> sql = perRow(c, table, config);
                List<String> differ = new ArrayList<>();
                for (var e : javaVerdicts.entrySet()) {
                    Object[] s = sql.get(e.getKey());
                    StorableSql.Cause cause = (StorableSql.Cause) s[1];
                    String verdict = cause == null ? "stored" : "refused " + cause.column();
                    if (!verdict.equals(e.getValue()))
                        differ.add(e.getKey() + ": codec " + e.getValue() + ", sql " + verdict);
                    if (cause == null && !s[0].equals(javaSizes.get(e.getKey())))
                        differ.add(e.getKey() + ": codec size " + javaSizes.get(e.getKey()) + ", sql " + s[0]);
                }
                assertThat(differ).isEmpty();
                long refused = javaVerdicts.values().stream()
                        .filter(v -> v.startsWith("refused"))
                        .count();
                assertThat(refused).isEqualTo(mode.equals("map") ? 11 : mode.equals("string") ? 7 : 2);
                if (mode.equals("map")) {
                    assertThat(((StorableSql.Cause) sql.get(id(13))[1]).refusal())
                            .isEqualTo(Refusal.JSON_DEPTH);
                    assertThat(((StorableSql.Cause) sql.get(id(10))[1]).refusal())
                            .isEqualTo(Refusal.JSON_NUMBER);
                    assertThat(((StorableSql.Cause) sql.get(id(18))[1]).refusal())
                            .isEqualTo(Refusal.ITEM_SIZE);
                }
            }
        }
    }

    private static String id(int i) {
        return Ulid.of(TypeZoo.BASE.toEpochMilli() + i, i, i);
    }

    /** Per row, the item size and the first cause (null when stored) Postgres computes. */
    private static Map<String, Object[]> perRow(Connection c, SourceTable table, MigrationConfig config)
            throws Exception {
        List<String> names = new ArrayList<>();
        for (var col : table.columns()) {
            names.add(table.key().attributeOf(col.name()));
        }
        SlotIndex index = SlotIndex.of(config.target());
        long fixed = index.attribute().length() + "20241020.01".length();
        StorableSql storable =
                new StorableSql(table.columns(), names, config.target().forms(), fixed);
        Map<String, Object[]> out = new HashMap<>();
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT src.id, " + StorableSql.SIZE + ", " + storable.refusal()
                        + " FROM " + table.name() + " AS src CROSS JOIN LATERAL (SELECT " + storable.itemSize()
                        + " AS rebalance_item_bytes) s")) {
            while (rs.next()) {
                long size = rs.getLong(2);
                int cause = rs.getInt(3);
                boolean stored = rs.wasNull();
                out.put(
                        rs.getString(1),
                        new Object[] {size, stored ? null : storable.causes().get(cause - 1)});
            }
        }
        return out;
    }
}
