package io.rebalance.core.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rebalance.protocol.RebalanceException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

class RowDecoderTest {
    private final RowDecoder decoder = new RowDecoder(
            List.of(
                    ColumnSpec.scalar("id", "text"),
                    ColumnSpec.scalar("t", "text"),
                    ColumnSpec.scalar("n", "int8"),
                    ColumnSpec.scalar("tstz", "timestamptz"),
                    ColumnSpec.scalar("d", "date"),
                    ColumnSpec.arrayOf("at", "text"),
                    ColumnSpec.scalar("j", "jsonb")),
            "id",
            "pk",
            true,
            "_slot");

    @Test
    void theStringNullAndTheNullAttributeAndAnAbsentAttributeStayApart() {
        String[] row = decoder.decode(Map.of(
                "pk", s("01J"),
                "_slot", s("20241020.01"),
                "t", s("NULL"),
                "n", AttributeValue.fromNul(true)));
        assertThat(row).containsExactly("01J", "NULL", null, null, null, null, null);
    }

    @Test
    void astronomicalYearsGoBackToPostgresEras() {
        String[] row = decoder.decode(Map.of(
                "pk", s("k"),
                "tstz", s("-0043-03-15T12:00:00.000000Z"),
                "d", s("0000-01-01")));
        assertThat(row[3]).isEqualTo("0044-03-15 12:00:00.000000+00 BC");
        assertThat(row[4]).isEqualTo("0001-01-01 BC");
        assertThat(ValueDecoder.timestamp("2024-10-20T01:02:03.123456", false)).isEqualTo("2024-10-20 01:02:03.123456");
        assertThat(ValueDecoder.date("infinity")).isEqualTo("infinity");
    }

    @Test
    void arrayElementsAreQuotedSoQuotesBackslashesAndTheWordNullSurvive() {
        String[] row = decoder.decode(Map.of(
                "pk",
                s("k"),
                "at",
                AttributeValue.fromL(List.of(
                        s("a\"b"),
                        s("c\\d"),
                        s("NULL"),
                        AttributeValue.fromNul(true),
                        AttributeValue.fromL(List.of(s(""), s(" ")))))));
        assertThat(row[5]).isEqualTo("{\"a\\\"b\",\"c\\\\d\",\"NULL\",NULL,{\"\",\" \"}}");
        assertThat(PgArrayLiteral.parse(row[5]))
                .isEqualTo(java.util.Arrays.asList("a\"b", "c\\d", "NULL", null, List.of("", " ")));
    }

    @Test
    void jsonMapsBecomeJsonTextWithNumbersUntouched() {
        String[] row = decoder.decode(Map.of(
                "pk",
                s("k"),
                "j",
                AttributeValue.fromM(Map.of(
                        "big", AttributeValue.fromN("12345678901234567890.000000000000000000001"), "s", s("NULL")))));
        assertThat(JsonAttributes.tree(row[6]))
                .isEqualTo(AttributeValue.fromM(Map.of(
                        "big", AttributeValue.fromN("12345678901234567890.000000000000000000001"), "s", s("NULL"))));
    }

    @Test
    void anAttributeWithNoColumnIsRefusedNamingItRatherThanDropped() {
        assertThatThrownBy(() -> decoder.decode(Map.of("pk", s("01J"), "extra", s("x"))))
                .isInstanceOf(RebalanceException.class)
                .hasMessageContaining("item id=01J")
                .hasMessageContaining("'extra'")
                .hasMessageContaining("source.columns");
    }

    @Test
    void aValueStoredAsTheWrongTypeIsRefusedNamingTheAttribute() {
        assertThatThrownBy(() -> decoder.decode(Map.of("pk", s("01J"), "n", s("12"))))
                .isInstanceOf(RebalanceException.class)
                .hasMessageContaining("attribute n (int8)")
                .hasMessageContaining("stored as N, not S");
        assertThatThrownBy(() -> decoder.decode(Map.of("t", s("x"))))
                .isInstanceOf(RebalanceException.class)
                .hasMessageContaining("has no pk attribute");
    }

    private static AttributeValue s(String v) {
        return AttributeValue.fromS(v);
    }
}
