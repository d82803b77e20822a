package io.rebalance.core.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class DynamoNumberTest {
    @Test
    void theFastPathTakesOnlyPlainShortDecimals() {
        assertThat(DynamoNumber.isShortPlainDecimal("-123.45")).isTrue();
        assertThat(DynamoNumber.isShortPlainDecimal("9".repeat(38))).isTrue();
        assertThat(DynamoNumber.isShortPlainDecimal("9".repeat(39))).isFalse();
        assertThat(DynamoNumber.isShortPlainDecimal("1e5")).isFalse();
        assertThat(DynamoNumber.isShortPlainDecimal("1.2.3")).isFalse();
        assertThat(DynamoNumber.isShortPlainDecimal("-")).isFalse();
        assertThat(DynamoNumber.isShortPlainDecimal(".")).isFalse();
    }

    @Test
    void slowPathStillRefusesWhatDynamoCannotHold() {
        assertThat(DynamoNumber.check("1e125", "n")).isEqualTo("1e125");
        assertThatThrownBy(() -> DynamoNumber.check("1e126", "n")).hasMessageContaining("range");
        assertThatThrownBy(() -> DynamoNumber.check("1e-131", "n")).hasMessageContaining("range");
        assertThat(DynamoNumber.check("1e-130", "n")).isEqualTo("1e-130");
        assertThatThrownBy(() -> DynamoNumber.check("abc", "n")).hasMessageContaining("not a decimal");
    }

    @Test
    void theSizeBoundNeverUndercounts() {
        var item = java.util.Map.of(
                "k", software.amazon.awssdk.services.dynamodb.model.AttributeValue.fromS("\u00e9".repeat(150_000)));
        assertThat(ItemSize.of(item)).isEqualTo(300_001);
        assertThat(ItemSize.exceedsLimit(item)).isFalse();
        var big = java.util.Map.of(
                "k", software.amazon.awssdk.services.dynamodb.model.AttributeValue.fromS("\u00e9".repeat(210_000)));
        assertThat(ItemSize.exceedsLimit(big)).isTrue();
    }
}
