package io.rebalance.testkit;

import io.rebalance.core.slot.Ulid;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * A table with every type the codec maps and the values that break naive comparisons: NULL next to the string
 * 'NULL' and the empty string, trailing spaces, emoji and combining characters, 38-digit numerics, floats that
 * only print exactly with 17 digits, timestamps with microseconds in odd zones, BC dates, infinities, nested json
 * with numbers that a double would round, arrays of several dimensions. Ids are ULIDs in slots 20241020.01-.03.
 */
public final class TypeZoo {
    public static final Instant BASE = Instant.parse("2024-10-20T01:00:00Z");
    public static final String DDL = "CREATE TABLE %s (id text PRIMARY KEY, t text, vc varchar(20), ch char(5),"
            + " i2 int2, i4 int4, i8 int8, num numeric, f4 float4, f8 float8, b bool, u uuid, j json, jb jsonb,"
            + " ts timestamp, tstz timestamptz, d date, by bytea, ai int4[], at text[], a2 int8[], atz timestamptz[],"
            + " ach char(3)[], aby bytea[], anum numeric[], ajb jsonb[], iv interval)";

    /** The value rows, each a SQL VALUES tuple without its id. */
    private static final List<String> ROWS = List.of(
            // all NULL
            "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
                    + " NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL",
            // the string NULL, empty strings, extremes
            "'NULL', '', 'ab', 32767, -2147483648, 9223372036854775807, 12345678901234567890123456789012345678,"
                    + " 3.25, 1.0000000000000002, true, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',"
                    + " '{\"b\": 1, \"a\": [1, 2.50, {\"x\": null}], \"b2\": 1e2}',"
                    + " '{\"big\": 12345678901234567890, \"s\": \"NULL\", \"e\": \"\", \"f\": 0.1000000000000000055511151231257827}',"
                    + " '2024-10-20 01:02:03.123456', '2024-10-20 03:02:03.123456+02', '2024-02-29', '\\x00ff',"
                    + " '{1,NULL,3}', '{\"a b\",\"NULL\",NULL,\"\"}', '{{1,2},{3,4}}',"
                    + " '{\"2024-10-20 01:02:03.1+05:45\",NULL}', '{a,\"b \",NULL}', '{\"\\\\x01\",NULL}',"
                    + " '{2.50,NaN,-0.0}', ARRAY['{\"k\": [1, 2]}'::jsonb, 'null'::jsonb, NULL], '1 day 02:03:04.5'",
            // trailing spaces, unicode, NaN and infinities, zero-length values
            "'trailing  ', 'e\u0301\u00e9 \uD83D\uDE00', 'x', -32768, 0, -9223372036854775808,"
                    + " -0.000000000000000000000000000000000001, 'NaN', 'Infinity', false,"
                    + " '00000000-0000-0000-0000-000000000000', '\"just a string\"', '[]',"
                    + " '1999-12-31 23:59:59.999999', '1999-12-31 23:59:59.5+05:45', '0001-01-01', '\\x',"
                    + " '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', 'P0D'",
            // odd zones, BC, infinities, json null and scalars, keys that sort differently by UTF-16 and code point
            "' ', 'NULL ', '     ', 0, 1, 1, 2.500, '-0', '1e+20', true, 'ffffffff-ffff-ffff-ffff-ffffffffffff',"
                    + " 'null', '{\"\uFF61\": 1, \"\uD83D\uDE00\": 2, \"a\": {\"z\": [true, false, null], \"y\": -0.0}}',"
                    + " '0044-03-15 12:00:00 BC', '2024-10-20 01:00:00-03:30', '0044-03-15 BC', '\\xdeadbeef',"
                    + " '{{{1},{2}},{{3},{4}}}', '{\"\u00e9\",\"e\u0301\"}', '{{9223372036854775807},{-1}}',"
                    + " '{infinity,-infinity}', '{\"   \"}', '{}', '{1e-130,99999999999999999999999999999999999999}',"
                    + " ARRAY['\"s\"'::jsonb, '12.0'::jsonb], '-1 year -2 mons +3 days -04:05:06'",
            // json numbers of every spelling; timestamps at the edges of a second
            "'a\tb\nc', 'quote''s', 'é', 1, 2, 3, 1E+5, 1.17549435e-38, 0.30000000000000004, false,"
                    + " 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11', '12.50', '{\"n\": [1.0, 1e1, 1E-1, -0, 100]}',"
                    + " 'infinity', '-infinity', 'infinity', '\\x00', '{0}', '{\"\"}', '{0}', '{NULL}', '{\"\"}',"
                    + " '{\"\\\\x\"}', '{NULL}', '{}', '00:00:00.000001'",
            // json as jsonb writes it: trailing zeros inside and outside strings, escapes, keys of every length;
            // times past the four-digit years
            "'j', NULL, NULL, NULL, NULL, NULL, 1.50, NULL, NULL, NULL, NULL,"
                    + " '{\"v\": \"1.50, 2.0]\", \"w\": [1.50, 20, 0.0, -3.10, 100], \"ctl\": \"a\\u0001b\\\"c\\\\d\\/e\\tf\","
                    + " \"k\": {\"aa\": 1, \"b\": 2, \"ccc\": 3.000, \"\u00e9\": 4, \"z\": 5, \"ab\": 6}}',"
                    + " '{\"bb\": 10.10, \"a\": \"x.0,\", \"d\": 1, \"d\": 2, \"\u00e9\": \"\u2028 ok\", \"n\": 0.000}',"
                    + " '0999-12-31 23:59:59.5', '10000-01-01 00:00:00+00', '9999-12-31', NULL, NULL, NULL, NULL,"
                    + " NULL, NULL, NULL, NULL, ARRAY['[1.50, \"2.50\"]'::jsonb, '0.10'::jsonb], NULL");

    private TypeZoo() {}

    /** Creates the table with every row, {@code copies} times over (ids one second apart, spread over 3 slots). */
    public static List<String> create(Connection c, String table, int copies) throws Exception {
        List<String> ids = new ArrayList<>();
        try (Statement st = c.createStatement()) {
            st.execute(String.format(DDL, table));
            int n = 0;
            for (int k = 0; k < copies; k++) {
                for (String row : ROWS) {
                    String id = id(n++);
                    ids.add(id);
                    st.execute("INSERT INTO " + table + " VALUES ('" + id + "', " + row + ")");
                }
            }
        }
        return ids;
    }

    public static String id(int n) {
        long ms = BASE.toEpochMilli() + (n % 3) * 3_600_000L + (n / 3) * 1000L + 7;
        return Ulid.of(ms, n, n * 7919L);
    }

    public static int rowsPerCopy() {
        return ROWS.size();
    }
}
