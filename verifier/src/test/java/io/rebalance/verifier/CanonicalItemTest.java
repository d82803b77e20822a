package io.rebalance.verifier;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.codec.ColumnSpec;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The canonical item encoding's one rule for NULL (an absent attribute and a NULL attribute are the same value), and
 * its json text as Postgres writes jsonb.
 */
class CanonicalItemTest {
    private final CanonicalItem canonical = new CanonicalItem(
            List.of(ColumnSpec.scalar("id", "text"), ColumnSpec.scalar("data", "jsonb")), "id", "id", "_slot", true);

    @Test
    void anAbsentAttributeEncodesAsNullAsTheRowsNullDoes() {
        Map<String, AttributeValue> absent = Map.of("id", s("k"), "_slot", s("20241020.02"));
        Map<String, AttributeValue> nul = Map.of("id", s("k"), "data", AttributeValue.fromNul(true), "_slot", s("x"));
        assertThat(canonical.encode(absent)).isEqualTo(canonical.encode(nul));
        assertThat(canonical.token(1, absent)).isEqualTo("Z"); // what CanonicalSql gives a NULL column
    }

    @Test
    void aJsonMapIsWrittenAsPostgresWritesItsJsonb() {
        Map<String, AttributeValue> map = new java.util.LinkedHashMap<>();
        map.put("ccc", AttributeValue.fromN("3.000"));
        map.put("b", AttributeValue.fromS("q\"b\\s\n\u0001\u00e9/"));
        map.put("aa", AttributeValue.fromL(List.of(AttributeValue.fromNul(true), AttributeValue.fromBool(false))));
        map.put("\u00e9", AttributeValue.fromM(Map.of()));
        Map<String, AttributeValue> item = Map.of("id", s("k"), "data", AttributeValue.fromM(map));
        // keys by UTF-8 length, then bytes ("é" is two bytes); escape_json's escapes; numbers without trailing zeros
        assertThat(canonical.token(1, item))
                .isEqualTo(
                        "J{\"b\": \"q\\\"b\\\\s\\n\\u0001\u00e9/\", \"aa\": [null, false], \"\u00e9\": {}, \"ccc\": 3}");
        Map<String, AttributeValue> set =
                Map.of("id", s("k"), "data", AttributeValue.fromM(Map.of("s", AttributeValue.fromSs(List.of("x")))));
        assertThat(canonical.token(1, set)).startsWith("?"); // json never becomes a set: it can only mismatch
    }

    @Test
    void theStringNullAndAnExtraAttributeStillDiffer() {
        Map<String, AttributeValue> text = Map.of("id", s("k"), "data", s("NULL"), "_slot", s("x"));
        assertThat(canonical.token(1, text)).isNotEqualTo("Z");
        Map<String, AttributeValue> extra = Map.of("id", s("k"), "other", s("1"), "_slot", s("x"));
        assertThat(canonical.encode(extra)).contains("?extra[other]");
    }

    /**
     * One type per attribute: with a column named in target.jsonAsString or target.numbersAsString, an item written
     * in the other form (before the setting named it) differs from its row, so `verify --repair` rewrites it; both
     * forms verified equal before, leaving the attribute N on some items and S on others for good.
     */
    @Test
    void anItemInTheFormBeforeAFormSettingDiffersFromItsRow() {
        var columns = List.of(
                ColumnSpec.scalar("id", "text"),
                ColumnSpec.scalar("data", "jsonb"),
                ColumnSpec.scalar("big", "numeric"));
        var strict = new CanonicalItem(
                columns,
                "id",
                "id",
                "_slot",
                new io.rebalance.core.codec.ColumnForms(true, java.util.Set.of("data"), java.util.Set.of("big")));
        Map<String, AttributeValue> asText = Map.of("id", s("k"), "data", s("{\"a\": 1}"), "big", s("12.50"));
        Map<String, AttributeValue> before = Map.of(
                "id",
                s("k"),
                "data",
                AttributeValue.fromM(Map.of("a", AttributeValue.fromN("1"))),
                "big",
                AttributeValue.fromN("12.50"));
        assertThat(strict.token(1, before))
                .isNotEqualTo(strict.token(1, asText))
                .contains("target.jsonAsString");
        assertThat(strict.token(2, before))
                .isNotEqualTo(strict.token(2, asText))
                .contains("target.numbersAsString");
        assertThat(strict.token(1, asText)).startsWith("J");
    }

    private static AttributeValue s(String v) {
        return AttributeValue.fromS(v);
    }
}
