package io.rebalance.core.codec;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class PgArrayLiteralTest {
    @Test
    void unquotedNullIsNullAndQuotedNullIsTheString() {
        assertThat(PgArrayLiteral.parse("{1,NULL,\"NULL\"}")).isEqualTo(Arrays.asList("1", null, "NULL"));
    }

    @Test
    void quotesAndBackslashesAreUnescaped() {
        assertThat(PgArrayLiteral.parse("{\"a b\",\"c\\\"d\",\"e\\\\f\",\"\",\"{x,y}\"}"))
                .isEqualTo(List.of("a b", "c\"d", "e\\f", "", "{x,y}"));
    }

    @Test
    void nestedAndEmptyArrays() {
        assertThat(PgArrayLiteral.parse("{}")).isEmpty();
        assertThat(PgArrayLiteral.parse("{{1,2},{3,NULL}}"))
                .isEqualTo(List.of(List.of("1", "2"), Arrays.asList("3", null)));
        assertThat(PgArrayLiteral.parse("[0:1]={7,8}")).isEqualTo(List.of("7", "8"));
    }
}
