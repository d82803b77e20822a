package io.rebalance.cutover;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.protocol.part.PartHash;
import io.rebalance.protocol.part.PartMap;
import io.rebalance.protocol.part.PartSpec;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Postgres and Java name the same part for every value: {@link PartMap#sqlPart} (the fence trigger's and the
 * verifier's filter) against {@link PartMap#partOf} (an application's {@code WriteGuard}), for each kind of rule
 * and each key type parts divide (bigint, text, uuid), over values picked to sit on every edge.
 */
class PartSqlIT {
    private final SharedServices services = SharedServices.get();

    @Test
    void bigintKeys() throws Exception {
        PartMap map = PartMap.of(List.of(
                PartSpec.values("pilot", 42, 7),
                PartSpec.range("low", null, -100),
                PartSpec.range("band", 1_000, 2_000),
                PartSpec.hash("early", 0, 10),
                PartSpec.hash("mid", 10, 55),
                PartSpec.rest("rest")));
        StringBuilder values = new StringBuilder();
        for (long v = -300; v < 3_000; v++)
            values.append(values.length() == 0 ? "" : ",").append("(" + v + ")");
        values.append(",(9223372036854775807),(-9223372036854775808)");
        assertSameParts(map, "bigint", values.toString(), Long::parseLong);
    }

    @Test
    void textKeys() throws Exception {
        PartMap map = PartMap.of(List.of(
                PartSpec.values("named", "acme", "it's", "42"),
                PartSpec.range("a-m", "a", "n"),
                PartSpec.range("upper", null, "a"),
                PartSpec.range("high", "\uE000", null), // a character past the BMP sorts above it, as in UTF-8
                PartSpec.hash("half", 0, 50),
                PartSpec.rest("rest")));
        List<String> texts = new java.util.ArrayList<>(List.of(
                "acme", "it's", "42", "a", "m", "mzzz", "n", "N", "Zeta", "", "é", "\uD83D\uDE00", "\uFFFD", "~"));
        for (int i = 0; i < 2_000; i++) texts.add("tenant-" + i);
        StringBuilder values = new StringBuilder();
        for (String t : texts)
            values.append(values.length() == 0 ? "" : ",").append("('" + t.replace("'", "''") + "')");
        assertSameParts(map, "text", values.toString(), t -> t);
    }

    @Test
    void uuidKeys() throws Exception {
        PartMap map = PartMap.of(List.of(
                PartSpec.range("first", null, "40000000-0000-0000-0000-000000000000"),
                PartSpec.hash("some", 20, 40),
                PartSpec.rest("rest")));
        StringBuilder values = new StringBuilder();
        java.util.Random random = new java.util.Random(49);
        for (int i = 0; i < 2_000; i++) {
            UUID u = new UUID(random.nextLong(), random.nextLong());
            values.append(values.length() == 0 ? "" : ",").append("('" + u + "')");
        }
        assertSameParts(map, "uuid", values.toString(), UUID::fromString);
    }

    private void assertSameParts(
            PartMap map, String type, String values, java.util.function.Function<String, Object> read)
            throws Exception {
        Map<String, Integer> seen = new HashMap<>();
        int rows = 0;
        try (Connection c = services.postgres();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT k::text, " + map.sqlPart("k") + ", "
                        + PartHash.sql("k::text") + " FROM (VALUES " + values + ") AS v(x), LATERAL (SELECT x::"
                        + type + " AS k) AS t")) {
            while (rs.next()) {
                Object value = read.apply(rs.getString(1));
                assertThat(rs.getString(2))
                        .as("part of %s %s", type, value)
                        .isEqualTo(map.partOf(value).name());
                assertThat(rs.getInt(3)).as("bucket of %s", value).isEqualTo(PartHash.bucket(value.toString()));
                seen.merge(rs.getString(2), 1, Integer::sum);
                rows++;
            }
        }
        assertThat(rows).isPositive();
        assertThat(seen.keySet()).as("every part is reached").containsExactlyInAnyOrderElementsOf(map.names());
    }
}
