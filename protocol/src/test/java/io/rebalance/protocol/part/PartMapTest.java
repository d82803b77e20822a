package io.rebalance.protocol.part;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rebalance.protocol.CodePoints;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class PartMapTest {
    private static final PartMap ROLLOUT =
            PartMap.of(List.of(PartSpec.values("pilot", 42), PartSpec.hash("early", 0, 10), PartSpec.rest("rest")));

    @Test
    void theFirstPartWhoseRuleHoldsTheValueWins() {
        assertThat(ROLLOUT.partOf(42L).name()).isEqualTo("pilot");
        assertThat(ROLLOUT.partOf("42").name())
                .as("42 and \"42\" are one value")
                .isEqualTo("pilot");
        assertThat(ROLLOUT.partOf(42).name()).isEqualTo("pilot");
        assertThat(PartHash.bucket("42"))
                .as("42's bucket is in early's range too; pilot comes first")
                .isLessThan(100);
        for (long v = 0; v < 2_000; v++) {
            String expected = v == 42 ? "pilot" : PartHash.bucket(Long.toString(v)) < 10 ? "early" : "rest";
            assertThat(ROLLOUT.partOf(v).name()).as("value %d", v).isEqualTo(expected);
        }
    }

    @Test
    void hashBucketsSpreadValuesEvenly() {
        Map<String, Integer> count = new HashMap<>();
        for (long v = 0; v < 100_000; v++) count.merge(ROLLOUT.partOf(v).name(), 1, Integer::sum);
        assertThat(count.get("early")).as("10 of 100 buckets").isBetween(9_000, 11_000);
    }

    @Test
    void theHashIsTheFirst32BitsOfTheMd5OfTheText() {
        // md5('42') = a1d0c6e83f027327d8461063f4ac58a6, as Postgres computes it: 0xa1d0c6e8 = 2714814184
        assertThat(PartHash.bucket("42")).isEqualTo((int) (2_714_814_184L % 100));
    }

    @Test
    void rangesAreHalfOpenAndEitherEndMayBeLeftOut() {
        PartMap map = PartMap.of(List.of(
                PartSpec.range("low", null, 100),
                PartSpec.range("mid", 100, 200),
                PartSpec.range("high", 200, null),
                PartSpec.rest("rest")));
        assertThat(map.partOf(-5).name()).isEqualTo("low");
        assertThat(map.partOf(99).name()).isEqualTo("low");
        assertThat(map.partOf(100).name()).isEqualTo("mid");
        assertThat(map.partOf(199).name()).isEqualTo("mid");
        assertThat(map.partOf(200).name()).isEqualTo("high");
        assertThatThrownBy(() -> map.partOf("acme")).hasMessageContaining("not a whole number");
    }

    @Test
    void textRangesCompareByCodePointAsCollateC() {
        PartMap map = PartMap.of(List.of(PartSpec.range("a-m", "a", "n"), PartSpec.rest("rest")));
        assertThat(map.partOf("acme").name()).isEqualTo("a-m");
        assertThat(map.partOf("Zeta").name())
                .as("upper case sorts before lower case")
                .isEqualTo("rest");
        assertThat(map.partOf("n").name()).isEqualTo("rest");
        assertThat(CodePoints.compare("\uFFFD", "\uD83D\uDE00"))
                .as("U+FFFD before U+1F600")
                .isNegative();
        UUID u = UUID.fromString("0e4c8d9a-0000-4000-8000-000000000000");
        assertThat(map.partOf(u).name()).as("a uuid by its lower-case text").isEqualTo("rest");
    }

    @Test
    void aTableWithoutPartsHasOneScope() {
        assertThat(PartMap.of(List.of())).isEqualTo(PartMap.WHOLE);
        assertThat(PartMap.WHOLE.parted()).isFalse();
        assertThat(PartMap.WHOLE.scopeOf("room_events", 42)).isEqualTo("room_events");
        assertThat(PartMap.WHOLE.scopes("room_events")).containsExactly("room_events");
        assertThat(ROLLOUT.scopeOf("room_events", 42)).isEqualTo("room_events/pilot");
        assertThat(ROLLOUT.scopes("room_events"))
                .containsExactly("room_events/pilot", "room_events/early", "room_events/rest");
    }

    @Test
    void writtenFormIsCanonicalAndReadsBack() {
        assertThat(ROLLOUT.written())
                .isEqualTo("[{name: pilot, values: [42]}, {name: early, hashFrom: 0, hashTo: 10}, {name: rest}]");
        PartMap text = PartMap.of(List.of(PartSpec.range("t", "100", "200"), PartSpec.rest("rest")));
        assertThat(text.written()).as("a text range's bounds stay quoted").contains("from: \"100\", to: \"200\"");
        assertThat(PartMap.of(List.of(
                        PartSpec.values("pilot", "42"), PartSpec.hash("early", null, 10), PartSpec.rest("rest"))))
                .isEqualTo(ROLLOUT);
    }

    @Test
    void sqlNamesThePartInOrder() {
        assertThat(ROLLOUT.sqlPart("\"tenant_id\""))
                .isEqualTo("CASE WHEN \"tenant_id\"::text IN ('42') THEN 'pilot' WHEN (('x' || substr(md5("
                        + "\"tenant_id\"::text), 1, 8))::bit(32)::bigint % 100) BETWEEN 0 AND 9 THEN 'early'"
                        + " ELSE 'rest' END");
        assertThat(PartMap.of(List.of(PartSpec.values("q", "it's"), PartSpec.rest("r")))
                        .sqlPart("k"))
                .contains("IN ('it''s')");
    }

    @Test
    void everyMistakeIsNamedWithItsKey() {
        assertThat(PartMap.problems(List.of(PartSpec.values("pilot", 42), PartSpec.hash("early", 0, 10)), "p"))
                .singleElement()
                .asString()
                .contains("p has no last part with only a name")
                .contains("{name: rest}");
        assertThat(PartMap.problems(List.of(PartSpec.values("a", 1), PartSpec.values("a", 2), PartSpec.rest("r")), "p"))
                .singleElement()
                .asString()
                .contains("p[1].name='a'")
                .contains("p[0] has it");
        assertThat(PartMap.problems(List.of(PartSpec.rest("r"), PartSpec.rest("s")), "p"))
                .singleElement()
                .asString()
                .contains("p[0] ('r') has no rule");
        assertThat(PartMap.problems(
                        List.of(
                                new PartSpec("Bad Name", List.of(1), null, null, 0, 5),
                                new PartSpec("v", List.of(), null, null, null, null),
                                new PartSpec("f", Arrays.asList(1.5, true), null, null, null, null),
                                PartSpec.range("r", 5, 5),
                                PartSpec.range("k", 1, "z"),
                                PartSpec.hash("h", 50, 101),
                                PartSpec.rest("rest")),
                        "p"))
                .anyMatch(m -> m.startsWith("p[0].name='Bad Name'"))
                .anyMatch(m -> m.startsWith("p[0] has 2 rules"))
                .anyMatch(m -> m.startsWith("p[1].values is empty"))
                .anyMatch(m -> m.startsWith("p[2].values[0]='1.5'"))
                .anyMatch(m -> m.startsWith("p[2].values[1]='true'"))
                .anyMatch(m -> m.startsWith("p[3] has from='5' not below to='5'"))
                .anyMatch(m -> m.startsWith("p[4] has from='1' and to='z' of two kinds"))
                .anyMatch(m -> m.startsWith("p[5] has hashFrom=50 and hashTo=101"))
                .hasSize(8);
        assertThatThrownBy(() -> PartMap.of(List.of(PartSpec.values("a", 1))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cutover.parts has no last part");
    }
}
