package io.rebalance.mover;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.copy.RunStatus;
import io.rebalance.testkit.ItemComparison;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Every type the codec maps, with NULLs, extremes, unicode and empty values, copied by the mover and compared with
 * expectations written out by hand here (not computed by the codec under test).
 */
class TypeZooIT {
    static final long EPOCH = 1433806952013L;
    static final long BASE_MS = Instant.parse("2024-10-20T01:00:00Z").toEpochMilli();

    static long id(int n) {
        return ((BASE_MS + n - EPOCH) << 23) | n;
    }

    @Test
    void everyMappedTypeRoundTripsExactly() throws Exception {
        try (MoverFixture f = new MoverFixture()) {
            f.set("slots.idFormat", "snowflake").set("slots.snowflake.epochMillis", Long.toString(EPOCH));
            try (Connection c = f.services.postgres();
                    Statement st = c.createStatement()) {
                st.execute(
                        "CREATE TABLE " + f.table
                                + " (id int8 PRIMARY KEY, t text, vc varchar(20), ch char(5), i2 int2,"
                                + " i4 int4, i8 int8, num numeric, f4 float4, f8 float8, b bool, u uuid, j json, jb jsonb,"
                                + " ts timestamp, tstz timestamptz, d date, by bytea, ai int4[], at text[], a2 int8[], iv interval)");
                st.execute("INSERT INTO " + f.table + " (id) VALUES (" + id(1) + ")"); // all NULL
                st.execute("INSERT INTO " + f.table + " VALUES (" + id(2) + ", 'NULL', '', 'ab', 32767, -2147483648,"
                        + " 9223372036854775807, 12345678901234567890123456789012345678, 3.25, 1.0000000000000002, true,"
                        + " 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{\"b\": 1, \"a\": [1, 2.50, {\"x\": null}]}',"
                        + " '{\"big\": 12345678901234567890, \"s\": \"NULL\", \"e\": \"\"}',"
                        + " '2024-10-20 01:02:03.123456', '2024-10-20 03:02:03.123456+02', '2024-02-29', '\\x00ff',"
                        + " '{1,NULL,3}', '{\"a b\",\"NULL\",NULL,\"\"}', '{{1,2},{3,4}}', '1 day 02:03:04.5')");
                st.execute("INSERT INTO " + f.table + " VALUES (" + id(3)
                        + ", 'trailing  ', 'e\u0301\u00e9 \uD83D\uDE00', 'x',"
                        + " -32768, 0, -9223372036854775808, -0.000000000000000000000000000000000001, 'NaN', 'Infinity',"
                        + " false, '00000000-0000-0000-0000-000000000000', '\"just a string\"', '[]',"
                        + " '1999-12-31 23:59:59.999999', '1999-12-31 23:59:59.5+05:45', '0001-01-01', '\\x',"
                        + " '{}', '{}', '{}', 'P0D')");
            }
            MoverProcess p = f.process(PhaseHooks.NONE, java.util.List.of());
            assertThat(f.start(p).get(60, TimeUnit.SECONDS)).isEqualTo(RunStatus.FINISHED);

            Map<Long, Map<String, AttributeValue>> expected = new HashMap<>();
            Map<String, AttributeValue> nulls = new HashMap<>();
            for (String col : List.of(
                    "t", "vc", "ch", "i2", "i4", "i8", "num", "f4", "f8", "b", "u", "j", "jb", "ts", "tstz", "d", "by",
                    "ai", "at", "a2", "iv")) {
                nulls.put(col, nul());
            }
            expected.put(id(1), nulls);
            expected.put(
                    id(2),
                    Map.ofEntries(
                            Map.entry("t", s("NULL")),
                            Map.entry("vc", s("")),
                            Map.entry("ch", s("ab   ")),
                            Map.entry("i2", n("32767")),
                            Map.entry("i4", n("-2147483648")),
                            Map.entry("i8", n("9223372036854775807")),
                            Map.entry("num", n("12345678901234567890123456789012345678")),
                            Map.entry("f4", n("3.25")),
                            Map.entry("f8", n("1.0000000000000002")),
                            Map.entry("b", AttributeValue.fromBool(true)),
                            Map.entry("u", s("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")),
                            Map.entry("j", m(Map.of("b", n("1"), "a", l(n("1"), n("2.5"), m(Map.of("x", nul())))))),
                            Map.entry("jb", m(Map.of("big", n("12345678901234567890"), "s", s("NULL"), "e", s("")))),
                            Map.entry("ts", s("2024-10-20T01:02:03.123456")),
                            Map.entry("tstz", s("2024-10-20T01:02:03.123456Z")),
                            Map.entry("d", s("2024-02-29")),
                            Map.entry("by", AttributeValue.fromB(SdkBytes.fromByteArray(new byte[] {0, (byte) 255}))),
                            Map.entry("ai", l(n("1"), nul(), n("3"))),
                            Map.entry("at", l(s("a b"), s("NULL"), nul(), s(""))),
                            Map.entry("a2", l(l(n("1"), n("2")), l(n("3"), n("4")))),
                            Map.entry("iv", s("P1DT2H3M4.5S"))));
            expected.put(
                    id(3),
                    Map.ofEntries(
                            Map.entry("t", s("trailing  ")),
                            Map.entry("vc", s("e\u0301\u00e9 \uD83D\uDE00")),
                            Map.entry("ch", s("x    ")),
                            Map.entry("i2", n("-32768")),
                            Map.entry("i4", n("0")),
                            Map.entry("i8", n("-9223372036854775808")),
                            Map.entry("num", n("-0.000000000000000000000000000000000001")),
                            Map.entry("f4", s("NaN")),
                            Map.entry("f8", s("Infinity")),
                            Map.entry("b", AttributeValue.fromBool(false)),
                            Map.entry("u", s("00000000-0000-0000-0000-000000000000")),
                            Map.entry("j", s("just a string")),
                            Map.entry("jb", l()),
                            Map.entry("ts", s("1999-12-31T23:59:59.999999")),
                            Map.entry("tstz", s("1999-12-31T18:14:59.500000Z")),
                            Map.entry("d", s("0001-01-01")),
                            Map.entry("by", AttributeValue.fromB(SdkBytes.fromByteArray(new byte[0]))),
                            Map.entry("ai", l()),
                            Map.entry("at", l()),
                            Map.entry("a2", l()),
                            Map.entry("iv", s("PT0S"))));

            try (DynamoDbClient d = f.services.dynamoClient()) {
                for (var e : expected.entrySet()) {
                    Map<String, AttributeValue> item = d.getItem(b -> b.tableName(f.table)
                                    .key(Map.of("id", AttributeValue.fromN(Long.toString(e.getKey())))))
                            .item();
                    Map<String, AttributeValue> want = new HashMap<>(e.getValue());
                    want.put("id", n(Long.toString(e.getKey())));
                    want.put("_slot", s("20241020.01")); // every zoo id lies in 01:00-02:00
                    List<String> diffs = new ArrayList<>();
                    ItemComparison.compare("", want, item, diffs);
                    assertThat(diffs).as("row " + e.getKey()).isEmpty();
                }
            }
        }
    }

    static AttributeValue s(String v) {
        return AttributeValue.fromS(v);
    }

    static AttributeValue n(String v) {
        return AttributeValue.fromN(v);
    }

    static AttributeValue nul() {
        return AttributeValue.fromNul(true);
    }

    static AttributeValue l(AttributeValue... v) {
        return AttributeValue.fromL(List.of(v));
    }

    static AttributeValue m(Map<String, AttributeValue> v) {
        return AttributeValue.fromM(v);
    }

    static {
        SharedServices.get();
    }
}
