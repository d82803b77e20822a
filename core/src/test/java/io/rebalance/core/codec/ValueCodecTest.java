package io.rebalance.core.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

class ValueCodecTest {
    private final ValueCodec maps = new ValueCodec(true);
    private final ValueCodec strings = new ValueCodec(false);

    @Test
    void integersKeepEveryDigitIncludingBigintExtremes() {
        assertThat(maps.encode(ColumnKind.INTEGER, "9223372036854775807").n()).isEqualTo("9223372036854775807");
        assertThat(maps.encode(ColumnKind.INTEGER, "-9223372036854775808").n()).isEqualTo("-9223372036854775808");
    }

    @Test
    void numericOf38DigitsIsKeptExactlyAnd39IsRefused() {
        String d38 = "12345678901234567890123456789012345678";
        assertThat(maps.encode(ColumnKind.NUMERIC, d38).n()).isEqualTo(d38);
        assertThat(maps.encode(ColumnKind.NUMERIC, "0.00000000000000000000000000000000000001")
                        .n())
                .isEqualTo("0.00000000000000000000000000000000000001");
        assertThatThrownBy(() -> maps.encode(ColumnKind.NUMERIC, d38 + "9"))
                .isInstanceOf(ValueRefusedException.class)
                .hasMessageContaining("39 significant digits");
        // trailing zeros are not significant: 1.5000 (40 chars of zeros) still fits
        assertThat(maps.encode(ColumnKind.NUMERIC, "1.5" + "0".repeat(40)).n()).startsWith("1.5");
    }

    @Test
    void specialFloatsBecomeStringsBecauseNumbersCannotHoldThem() {
        assertThat(maps.encode(ColumnKind.FLOAT, "NaN")).isEqualTo(AttributeValue.fromS("NaN"));
        assertThat(maps.encode(ColumnKind.NUMERIC, "-Infinity")).isEqualTo(AttributeValue.fromS("-Infinity"));
        assertThat(maps.encode(ColumnKind.FLOAT, "1.0000000000000002").n()).isEqualTo("1.0000000000000002");
    }

    @Test
    void timestampsBecomeIsoWithSixFractionDigits() {
        assertThat(ValueCodec.timestamp("2024-10-20 02:15:30.5+00", true)).isEqualTo("2024-10-20T02:15:30.500000Z");
        assertThat(ValueCodec.timestamp("2024-10-20 02:15:30+00", true)).isEqualTo("2024-10-20T02:15:30.000000Z");
        assertThat(ValueCodec.timestamp("2024-10-20 02:15:30.123456", false)).isEqualTo("2024-10-20T02:15:30.123456");
        assertThat(ValueCodec.timestamp("infinity", true)).isEqualTo("infinity");
        assertThat(ValueCodec.timestamp("0044-03-15 12:00:00+00 BC", true)).isEqualTo("-0043-03-15T12:00:00.000000Z");
        assertThat(ValueCodec.date("0001-01-01 BC")).isEqualTo("0000-01-01");
    }

    /** The common form, read by hand, gives what java.time formats for the instant (the next test: other forms). */
    @Test
    void everyTimestampFormReadsAsJavaTimeFormatsIt() {
        var iso = java.time.format.DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSS");
        var random = new java.util.Random(42);
        for (int i = 0; i < 20_000; i++) {
            var at = java.time.LocalDateTime.ofEpochSecond(
                    random.nextLong(-62_000_000_000L, 250_000_000_000L), // years 5 to 9892
                    random.nextInt(4) == 0 ? 0 : random.nextInt(1_000_000) * 1_000,
                    java.time.ZoneOffset.UTC);
            String fraction = String.format("%06d", at.getNano() / 1_000).replaceAll("0+$", "");
            // Postgres's text: no fraction when it is zero, trailing zeros dropped, "+00" on a timestamptz
            String text = at.toLocalDate()
                    + String.format(" %02d:%02d:%02d", at.getHour(), at.getMinute(), at.getSecond())
                    + (fraction.isEmpty() ? "" : "." + fraction);
            assertThat(ValueCodec.timestamp(text, false)).as(text).isEqualTo(iso.format(at));
            assertThat(ValueCodec.timestamp(text + "+00", true)).as(text).isEqualTo(iso.format(at) + "Z");
        }
    }

    @Test
    void timestampFormsOutsideTheCommonOneAreReadOrRefusedAsBefore() {
        assertThat(ValueCodec.timestamp("2024-10-20 02:15:30.5+00:00", true)).isEqualTo("2024-10-20T02:15:30.500000Z");
        assertThat(ValueCodec.timestamp("12024-10-20 02:15:30+00", true)).isEqualTo("12024-10-20T02:15:30.000000Z");
        assertThat(ValueCodec.timestamp("2024-10-20 02:15:30.5 BC", false)).isEqualTo("-2023-10-20T02:15:30.500000");
        assertThatThrownBy(() -> ValueCodec.timestamp("2024-10-20 02:15:30.1234567+00", true))
                .hasMessageContaining("not in ISO form");
        assertThatThrownBy(() -> ValueCodec.timestamp("2024-10-20 02:15:30", true))
                .hasMessageContaining("TimeZone");
        assertThatThrownBy(() -> ValueCodec.timestamp("2024-10-20T02:15:30+00", true))
                .hasMessageContaining("not in ISO form");
        assertThatThrownBy(() -> ValueCodec.timestamp("2024-10-2x 02:15:30+00", true))
                .hasMessageContaining("not in ISO form");
    }

    @Test
    void timestamptzNotInUtcIsRefusedRatherThanStoredWrong() {
        assertThatThrownBy(() -> ValueCodec.timestamp("2024-10-20 02:15:30+02", true))
                .hasMessageContaining("TimeZone");
    }

    @Test
    void jsonBecomesAMapWithExactNumbersOrAStringByChoice() {
        AttributeValue v = maps.encode(
                ColumnKind.JSON,
                "{\"big\": 9007199254740993, \"f\": 0.1000000000000000055511151231257827,"
                        + " \"s\": \"NULL\", \"n\": null, \"l\": [1, \"x\", false], \"o\": {}}");
        assertThat(v.m().get("big").n()).isEqualTo("9007199254740993");
        assertThat(v.m().get("f").n()).isEqualTo("0.1000000000000000055511151231257827");
        assertThat(v.m().get("s").s()).isEqualTo("NULL");
        assertThat(v.m().get("n").nul()).isTrue();
        assertThat(v.m().get("l").l())
                .containsExactly(AttributeValue.fromN("1"), AttributeValue.fromS("x"), AttributeValue.fromBool(false));
        assertThat(v.m().get("o").m()).isEmpty();
        assertThat(strings.encode(ColumnKind.JSON, "{\"a\": 1}").s()).isEqualTo("{\"a\": 1}");
    }

    @Test
    void jsonDeeperThanDynamoAllowsIsRefusedWithTheWayOut() {
        String deep = "[".repeat(40) + "]".repeat(40);
        assertThatThrownBy(() -> maps.encode(ColumnKind.JSON, deep)).hasMessageContaining("target.json: string");
    }

    @Test
    void byteaHexTextDecodes() {
        assertThat(maps.encode(ColumnKind.BYTEA, "\\x00ff10").b().asByteArray()).containsExactly(0, 255, 16);
    }

    @Test
    void boolAndStrings() {
        assertThat(maps.encode(ColumnKind.BOOL, "t").bool()).isTrue();
        assertThat(maps.encode(ColumnKind.BOOL, "f").bool()).isFalse();
        assertThat(maps.encode(ColumnKind.STRING, "").s()).isEmpty();
        assertThat(maps.encode(ColumnKind.STRING, "NULL").s()).isEqualTo("NULL");
    }
}
