package io.rebalance.cdc.reverse;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.slot.KeyRanges;
import io.rebalance.core.slot.TableKey;
import io.rebalance.core.source.SourceTable;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;

/**
 * Sets the slot attribute of the items the reverse stream writes back, where the table's slots are key ranges: an
 * application writing DynamoDB cannot know a key's range (Postgres keeps the ranges), so its items come without one,
 * and the slot index (verify, the rollback's compare) would not find them. A key's range never changes, so setting it
 * races no write: an item deleted meanwhile stays deleted (the update requires the item), and a later write without
 * the slot comes back through the stream and is mended again. Elsewhere the application writes the slot itself (the
 * hour of its id or time column, docs/codec.md) and this does nothing.
 */
final class SlotMend {
    private final DynamoDbClient dynamo;
    private final String targetTable;
    private final TableKey key;
    private final KeyRanges ranges; // null: not key ranges
    private final SlotIndex index;
    private final String select;

    SlotMend(SourceTable table, MigrationConfig.Target target, DynamoDbClient dynamo) {
        this.dynamo = dynamo;
        this.targetTable = target.table();
        this.key = table.key();
        this.ranges = table.keyspace() instanceof KeyRanges r ? r : null;
        this.index = SlotIndex.of(target);
        this.select = ranges == null
                ? null
                : "SELECT " + key.selectText("src.") + ", " + ranges.rowSlotSql("src.") + " FROM " + table.name()
                        + " AS src WHERE " + key.anyOf("src.");
    }

    /**
     * The slot attribute each item should have where it has another or none, by key text; read in the batch's
     * transaction, from the rows it just wrote.
     *
     * @param items the items written back, by key text
     */
    Map<String, String> wrong(Connection c, Map<String, Map<String, AttributeValue>> items) throws SQLException {
        Map<String, String> out = new LinkedHashMap<>();
        if (ranges == null || items.isEmpty()) return out;
        try (PreparedStatement ps = c.prepareStatement(select)) {
            ps.setArray(1, c.createArrayOf("text", items.keySet().toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    String keyText = rs.getString(1);
                    String should = index.value(ranges.rowSlot(rs.getString(2)), keyText);
                    Map<String, AttributeValue> item = items.get(keyText);
                    AttributeValue has = item == null ? null : item.get(index.attribute());
                    if (item != null && (has == null || !should.equals(has.s()))) out.put(keyText, should);
                }
            }
        }
        return out;
    }

    /** Sets each item's slot attribute, once the rows are committed; an item gone meanwhile is left gone. */
    void set(Map<String, String> slots) {
        for (Map.Entry<String, String> e : slots.entrySet()) {
            try {
                dynamo.updateItem(b -> b.tableName(targetTable)
                        .key(key.dynamoKey(e.getKey()))
                        .updateExpression("SET #s = :s")
                        .conditionExpression("attribute_exists(#k)")
                        .expressionAttributeNames(Map.of("#s", index.attribute(), "#k", key.partitionAttribute()))
                        .expressionAttributeValues(Map.of(":s", AttributeValue.fromS(e.getValue()))));
            } catch (ConditionalCheckFailedException deleted) {
                // deleted since: its delete comes through the stream too
            }
        }
    }
}
