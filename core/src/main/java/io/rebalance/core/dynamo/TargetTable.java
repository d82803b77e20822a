package io.rebalance.core.dynamo;

import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.CreateTableRequest;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.GlobalSecondaryIndex;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ProjectionType;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.StreamViewType;
import software.amazon.awssdk.services.dynamodb.model.TableDescription;

/**
 * The DynamoDB table as the copy needs it: it exists, its key is exactly one partition key named like the target's
 * partition key, of the type the source key becomes (S for ULID text and uuid, N for bigint), and it has the slot
 * index: a global secondary index keyed by the slot attribute (S) and the partition key, projecting all attributes,
 * through which one slot's items are read with Query instead of a table scan (docs/fingerprint.md).
 */
public final class TargetTable {
    private TargetTable() {}

    public static ScalarAttributeType attributeType(io.rebalance.core.slot.KeyType keyType) {
        return keyType == io.rebalance.core.slot.KeyType.BIGINT ? ScalarAttributeType.N : ScalarAttributeType.S;
    }

    /** @throws RebalanceException TARGET_UNREACHABLE, TARGET_TABLE_MISSING or TARGET_KEY_SCHEMA */
    public static void check(
            DynamoDbClient dynamo,
            String table,
            String partitionKey,
            io.rebalance.core.slot.KeyType keyType,
            SlotIndex index,
            String where) {
        TableDescription d = describe(dynamo, table, where);
        if (d == null) {
            throw new RebalanceException(
                    ErrorCode.TARGET_TABLE_MISSING,
                    "DynamoDB table '" + table + "' does not exist at "
                            + where + "; create it with partition key " + partitionKey + " (" + attributeType(keyType)
                            + "), or run `rebalance copy --create-table`");
        }
        var keys = d.keySchema();
        boolean fits = keys.size() == 1
                && keys.get(0).keyType() == KeyType.HASH
                && keys.get(0).attributeName().equals(partitionKey);
        ScalarAttributeType type = d.attributeDefinitions().stream()
                .filter(a -> a.attributeName().equals(partitionKey))
                .map(AttributeDefinition::attributeType)
                .findFirst()
                .orElse(null);
        if (!fits || type != attributeType(keyType)) {
            String found = keys.stream()
                            .map(k -> k.attributeName() + " " + k.keyType())
                            .toList() + " with types "
                    + d.attributeDefinitions().stream()
                            .map(a -> a.attributeName() + ":" + a.attributeType())
                            .toList();
            throw new RebalanceException(
                    ErrorCode.TARGET_KEY_SCHEMA,
                    "DynamoDB table '" + table + "' has key " + found
                            + "; the source key needs exactly one partition key " + partitionKey + " of type "
                            + attributeType(keyType)
                            + ". Point target.table at a table with that key, or set target.partitionKey to its key attribute");
        }
        var gsi = d.globalSecondaryIndexes().stream()
                .filter(g -> g.indexName().equals(index.name()))
                .findFirst()
                .orElse(null);
        boolean indexFits = gsi != null
                && gsi.keySchema().size() == 2
                && gsi.keySchema().get(0).attributeName().equals(index.attribute())
                && gsi.keySchema().get(1).attributeName().equals(partitionKey)
                && gsi.projection().projectionType() == ProjectionType.ALL;
        if (!indexFits) {
            throw new RebalanceException(
                    ErrorCode.TARGET_KEY_SCHEMA,
                    "DynamoDB table '" + table + "' "
                            + (gsi == null
                                    ? "has no index " + index.name()
                                    : "has index "
                                            + index.name() + " with keys "
                                            + gsi.keySchema().stream()
                                                    .map(k -> k.attributeName() + " " + k.keyType())
                                                    .toList()
                                            + " and projection "
                                            + gsi.projection().projectionType())
                            + "; the verifier reads a slot through a global secondary index " + index.name()
                            + " with partition key " + index.attribute() + " (S), sort key " + partitionKey
                            + " and projection ALL. Add it (UpdateTable), let `rebalance copy --create-table` create the"
                            + " table, or set target.slotIndex to the name of such an index");
        }
    }

    /** Creates the table with its slot index on demand (pay per request) and waits until it is active. */
    public static void create(
            DynamoDbClient dynamo,
            String table,
            String partitionKey,
            io.rebalance.core.slot.KeyType keyType,
            SlotIndex index) {
        KeySchemaElement hashKey = KeySchemaElement.builder()
                .attributeName(partitionKey)
                .keyType(KeyType.HASH)
                .build();
        dynamo.createTable(CreateTableRequest.builder()
                .tableName(table)
                .keySchema(hashKey)
                .attributeDefinitions(
                        AttributeDefinition.builder()
                                .attributeName(partitionKey)
                                .attributeType(attributeType(keyType))
                                .build(),
                        AttributeDefinition.builder()
                                .attributeName(index.attribute())
                                .attributeType(ScalarAttributeType.S)
                                .build())
                .globalSecondaryIndexes(GlobalSecondaryIndex.builder()
                        .indexName(index.name())
                        .keySchema(
                                KeySchemaElement.builder()
                                        .attributeName(index.attribute())
                                        .keyType(KeyType.HASH)
                                        .build(),
                                hashKey.toBuilder().keyType(KeyType.RANGE).build())
                        .projection(p -> p.projectionType(ProjectionType.ALL))
                        .build())
                .billingMode(BillingMode.PAY_PER_REQUEST)
                .build());
        dynamo.waiter().waitUntilTableExists(b -> b.tableName(table));
    }

    /**
     * Turns the table's stream on (keys only: the reverse stream re-reads current items, ADR 7) unless it is on with
     * any view already, and waits until the table is active again. @return whether it was off
     */
    public static boolean enableStream(DynamoDbClient dynamo, String table) {
        var spec = dynamo.describeTable(b -> b.tableName(table)).table().streamSpecification();
        if (spec != null && Boolean.TRUE.equals(spec.streamEnabled())) return false;
        dynamo.updateTable(b -> b.tableName(table)
                .streamSpecification(s -> s.streamEnabled(true).streamViewType(StreamViewType.KEYS_ONLY)));
        dynamo.waiter().waitUntilTableExists(b -> b.tableName(table));
        return true;
    }

    /**
     * Counts the table's items with a COUNT scan in parallel segments and bounded pages (DynamoDB Local holds a
     * whole unbounded scan in memory). For checks and reports, not hot paths: a scan reads the whole table.
     */
    public static long countItems(DynamoDbClient dynamo, String table, int segments) {
        return java.util.stream.IntStream.range(0, segments)
                .parallel()
                .mapToLong(segment -> {
                    long n = 0;
                    java.util.Map<String, software.amazon.awssdk.services.dynamodb.model.AttributeValue> start = null;
                    do {
                        var from = start;
                        var r = dynamo.scan(b -> b.tableName(table)
                                .select(software.amazon.awssdk.services.dynamodb.model.Select.COUNT)
                                .segment(segment)
                                .totalSegments(segments)
                                .limit(5_000)
                                .exclusiveStartKey(from));
                        n += r.count();
                        start = r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty()
                                ? r.lastEvaluatedKey()
                                : null;
                    } while (start != null);
                    return n;
                })
                .sum();
    }

    public static boolean exists(DynamoDbClient dynamo, String table, String where) {
        return describe(dynamo, table, where) != null;
    }

    private static TableDescription describe(DynamoDbClient dynamo, String table, String where) {
        try {
            return dynamo.describeTable(b -> b.tableName(table)).table();
        } catch (ResourceNotFoundException e) {
            return null;
        } catch (SdkClientException e) {
            throw new RebalanceException(
                    ErrorCode.TARGET_UNREACHABLE,
                    "DynamoDB at " + where + " does not answer (" + e.getMessage()
                            + "); start it (`rebalance-demo dynamodb-local` serves one) or fix target.endpoint",
                    e);
        } catch (DynamoDbException e) {
            throw new RebalanceException(
                    ErrorCode.TARGET_UNREACHABLE,
                    "DynamoDB at " + where + " refused DescribeTable " + table + ": " + e.getMessage()
                            + "; check credentials and target.region",
                    e);
        }
    }
}
