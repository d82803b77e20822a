package io.rebalance.sim;

import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.Delete;
import software.amazon.awssdk.services.dynamodb.model.Put;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.Update;

/**
 * The simulators' writes of an event to DynamoDB, as the guard sends them: each conditional on the event's
 * {@code seq} being there or not, so a write that lands twice or on a missing item fails instead of passing unseen.
 */
final class SeqWrites {
    private static final Map<String, String> SEQ = Map.of("#s", AppSimulator.SEQ);

    private SeqWrites() {}

    /** A new event, {@code seq} 1 in {@code item}. */
    static TransactWriteItem insert(String table, Map<String, AttributeValue> item) {
        return TransactWriteItem.builder()
                .put(Put.builder()
                        .tableName(table)
                        .item(item)
                        .conditionExpression("attribute_not_exists(#s)")
                        .expressionAttributeNames(SEQ)
                        .build())
                .build();
    }

    /** The event's {@code seq} one higher. */
    static TransactWriteItem increment(String table, Map<String, AttributeValue> key) {
        return TransactWriteItem.builder()
                .update(Update.builder()
                        .tableName(table)
                        .key(key)
                        .updateExpression("SET #s = #s + :one")
                        .conditionExpression("attribute_exists(#s)")
                        .expressionAttributeNames(SEQ)
                        .expressionAttributeValues(Map.of(":one", AttributeValue.fromN("1")))
                        .build())
                .build();
    }

    /** The event gone. */
    static TransactWriteItem delete(String table, Map<String, AttributeValue> key) {
        return TransactWriteItem.builder()
                .delete(Delete.builder()
                        .tableName(table)
                        .key(key)
                        .conditionExpression("attribute_exists(#s)")
                        .expressionAttributeNames(SEQ)
                        .build())
                .build();
    }
}
