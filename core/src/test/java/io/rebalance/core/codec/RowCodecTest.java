package io.rebalance.core.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rebalance.core.slot.Slot;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

class RowCodecTest {
    private final RowCodec codec = new RowCodec(
            List.of(
                    ColumnSpec.scalar("id", "text"),
                    ColumnSpec.scalar("note", "text"),
                    ColumnSpec.arrayOf("nums", "int8"),
                    ColumnSpec.scalar("raw", "bytea")),
            "id",
            "pk",
            true,
            new io.rebalance.core.dynamo.SlotIndex("by_slot", "_slot"),
            row -> Slot.parse("20241020.02"));

    @Test
    void nullIsTheNullAttributeAndDistinctFromTheStringNullAndEmpty() {
        Map<String, AttributeValue> a = codec.encode(new SourceRow("k1", new Object[] {"k1", null, null, null}));
        Map<String, AttributeValue> b =
                codec.encode(new SourceRow("k1", new Object[] {"k1", "NULL", "{}", new byte[0]}));
        Map<String, AttributeValue> c =
                codec.encode(new SourceRow("k1", new Object[] {"k1", "", "{NULL}", new byte[] {1}}));
        assertThat(a.get("note")).isEqualTo(AttributeValue.fromNul(true));
        assertThat(b.get("note")).isEqualTo(AttributeValue.fromS("NULL"));
        assertThat(c.get("note")).isEqualTo(AttributeValue.fromS(""));
        assertThat(c.get("nums").l()).containsExactly(AttributeValue.fromNul(true));
        assertThat(a.get("pk").s()).isEqualTo("k1");
        assertThat(a).doesNotContainKey("id");
        assertThat(a.get("_slot")).isEqualTo(AttributeValue.fromS("20241020.02"));
    }

    @Test
    void columnsNamedAsStringKeepWhatDynamoCannotHoldAsTheirTextAndComeBackExactly() {
        List<ColumnSpec> columns = List.of(
                ColumnSpec.scalar("id", "int8"),
                ColumnSpec.scalar("amount", "numeric"),
                ColumnSpec.scalar("doc", "jsonb"),
                ColumnSpec.scalar("other", "jsonb"));
        ColumnForms forms = new ColumnForms(true, java.util.Set.of("doc"), java.util.Set.of("amount"));
        RowCodec asText = codec(columns, forms);
        String huge = "1" + "0".repeat(200); // outside DynamoDB's number range
        Object[] values = {"7", huge, "{\"x\": 1.5e300}", "{\"y\": 1}"};
        Map<String, AttributeValue> item = asText.encode(new SourceRow("7", values));

        assertThat(item.get("amount")).isEqualTo(AttributeValue.fromS(huge));
        assertThat(item.get("doc")).isEqualTo(AttributeValue.fromS("{\"x\": 1.5e300}"));
        assertThat(item.get("other").hasM())
                .as("a column not named stays a map")
                .isTrue();
        String[] back = new RowDecoder(columns, "id", "id", forms, "_slot").decode(item);
        assertThat(back[1]).isEqualTo(huge);
        assertThat(back[2]).isEqualTo("{\"x\": 1.5e300}");
        Map<String, AttributeValue> before = new java.util.HashMap<>(item);
        before.put("doc", AttributeValue.fromM(Map.of("x", AttributeValue.fromN("1")))); // written before the setting
        assertThat(new RowDecoder(columns, "id", "id", forms, "_slot").decode(before)[2])
                .isEqualTo("{\"x\":1}");
        assertThatThrownBy(() -> codec(columns, ColumnForms.of(true)).encode(new SourceRow("7", values)))
                .as("without the setting, both are refused")
                .isInstanceOf(RowRefusedException.class);
    }

    private static RowCodec codec(List<ColumnSpec> columns, ColumnForms forms) {
        return new RowCodec(
                columns,
                "id",
                "id",
                forms,
                new io.rebalance.core.dynamo.SlotIndex("by_slot", "_slot"),
                row -> Slot.parse("20241020.02"));
    }

    @Test
    void anItemOverDynamoLimitIsRefusedNamingTheRow() {
        String big = "x".repeat(ItemSize.MAX_BYTES);
        assertThatThrownBy(() -> codec.encode(new SourceRow("01JABC", new Object[] {"01JABC", big, null, null})))
                .isInstanceOfSatisfying(
                        RebalanceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.ROW_REFUSED))
                .hasMessageContaining("row id=01JABC")
                .hasMessageContaining("409600");
    }

    /** 300,000 ASCII chars: over the cheap bound (3 bytes a char), under the limit as counted (a byte a char). */
    @Test
    void anItemOverTheBoundButUnderTheLimitIsKept() {
        String large = "x".repeat(300_000);
        var item = codec.encode(new SourceRow("01JABC", new Object[] {"01JABC", large, null, null}));
        assertThat(ItemSize.exceedsLimit(item)).isFalse();
        assertThat(ItemSize.of(item)).isBetween(300_000L, (long) ItemSize.MAX_BYTES);
        assertThat(item).containsKey("_slot");
    }

    @Test
    void aValueDynamoCannotHoldNamesRowAndColumn() {
        RowCodec n = new RowCodec(
                List.of(ColumnSpec.scalar("id", "int8"), ColumnSpec.scalar("amount", "numeric")),
                "id",
                "id",
                true,
                new io.rebalance.core.dynamo.SlotIndex("by_slot", "_slot"),
                row -> Slot.parse("20241020.02"));
        assertThatThrownBy(() -> n.encode(new SourceRow("42", new Object[] {"42", "1" + "0".repeat(130)})))
                .hasMessageContaining("row id=42")
                .hasMessageContaining("column amount (numeric)");
    }
}
