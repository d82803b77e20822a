package io.rebalance.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class KeyTextTest {
    @Test
    void aOneColumnKeyIsItsOwnText() {
        assertThat(KeyText.of(List.of(new KeyText.Part("01J9", false)))).isEqualTo("01J9");
        assertThat(KeyText.parts("[not, parsed]", 1)).containsExactly("[not, parsed]");
    }

    @Test
    void aTwoColumnKeyIsWhatPostgresPrintsForJsonbBuildArray() {
        // SELECT jsonb_build_array(7::int, 'a"b\'::text)::text  ->  [7, "a\"b\\"]
        assertThat(KeyText.of(List.of(new KeyText.Part("7", true), new KeyText.Part("a\"b\\", false))))
                .isEqualTo("[7, \"a\\\"b\\\\\"]");
        assertThat(KeyText.of(List.of(new KeyText.Part("x\ty\u0001", false), new KeyText.Part("42", true))))
                .isEqualTo("[\"x\\ty\\u0001\", 42]");
    }

    @Test
    void partsRoundTrip() {
        for (List<KeyText.Part> parts : List.of(
                List.of(new KeyText.Part("7", true), new KeyText.Part("1823", true)),
                List.of(new KeyText.Part("ac, me]", false), new KeyText.Part("01J9\"x", false)),
                List.of(new KeyText.Part("", false), new KeyText.Part("é\n", false)))) {
            String text = KeyText.of(parts);
            assertThat(KeyText.parts(text, 2))
                    .containsExactlyElementsOf(
                            parts.stream().map(KeyText.Part::text).toList());
        }
    }

    @Test
    void aTextOfAnotherShapeIsRefused() {
        for (String bad : List.of("7", "[7]", "[7, 8, 9]", "[7,8]", "[7, \"x]", "[7, 8] ")) {
            assertThatThrownBy(() -> KeyText.parts(bad, 2)).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
