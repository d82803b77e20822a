package io.rebalance.core.slot;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

class TableKeyTest {
    private final TableKey tenantId =
            new TableKey(List.of("tenant_id", "id"), List.of(KeyType.BIGINT, KeyType.BIGINT), List.of("pk", "sk"));
    private final TableKey single = TableKey.single("id", KeyType.TEXT, "id");

    @Test
    void aTwoColumnKeyMapsToThePartitionAndTheSortKey() {
        String text = tenantId.text(List.of("7", "1823"));
        assertThat(text).isEqualTo("[7, 1823]");
        assertThat(tenantId.dynamoKey(text))
                .isEqualTo(Map.of("pk", AttributeValue.fromN("7"), "sk", AttributeValue.fromN("1823")));
        assertThat(tenantId.textOf(Map.of(
                        "pk",
                        AttributeValue.fromN("7"),
                        "sk",
                        AttributeValue.fromN("1823"),
                        "x",
                        AttributeValue.fromS("y"))))
                .isEqualTo(text);
        assertThat(tenantId.textOf(Map.of("pk", AttributeValue.fromN("7")))).isNull();
        assertThat(tenantId.name(text)).isEqualTo("tenant_id=7, id=1823");
        assertThat(tenantId.attributeOf("id")).isEqualTo("sk");
        assertThat(tenantId.attributeOf("kind")).isEqualTo("kind");
        assertThat(tenantId.timeColumn()).isEqualTo("id");
    }

    @Test
    void sqlNamesBothColumnsAndPagesTimePartFirst() {
        assertThat(tenantId.selectText("src.")).isEqualTo("jsonb_build_array(src.\"tenant_id\", src.\"id\")::text");
        assertThat(tenantId.pageOrder("src.")).isEqualTo("src.\"id\", src.\"tenant_id\"");
        assertThat(tenantId.pageAfter("")).isEqualTo("(\"id\", \"tenant_id\") > (?, ?)");
        assertThat(tenantId.anyOf(""))
                .isEqualTo("(\"tenant_id\", \"id\") IN (SELECT (k->>0)::int8, (k->>1)::int8 FROM unnest(CAST(? AS"
                        + " jsonb[])) k)");
        assertThat(tenantId.operand("", true)).isEqualTo("(\"tenant_id\", \"id\")");
    }

    @Test
    void aOneColumnKeyIsAsBefore() {
        assertThat(single.text(List.of("01J9"))).isEqualTo("01J9");
        assertThat(single.selectText("")).isEqualTo("\"id\"::text");
        assertThat(single.anyOf("")).isEqualTo("\"id\" = ANY(CAST(? AS text[]))");
        assertThat(single.operand("", true)).isEqualTo("\"id\" COLLATE \"C\"");
        assertThat(single.dynamoKey("01J9")).isEqualTo(Map.of("id", AttributeValue.fromS("01J9")));
        assertThat(single.sortAttribute()).isNull();
    }
}
