package io.rebalance.core.dynamo;

import io.rebalance.core.slot.TableKey;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.CreateTableRequest;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.GlobalSecondaryIndex;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ProjectionType;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.Select;
import software.amazon.awssdk.services.dynamodb.model.StreamViewType;
import software.amazon.awssdk.services.dynamodb.model.TableDescription;

/**
 * The DynamoDB table as the copy needs it: it exists, its key is the source key's (a partition key, and a sort key for a
 * two-column key), named like the target's key attributes, of the types the key becomes (S for text and uuid, N for
 * bigint), and it has the slot
 * index: a global secondary index keyed by the slot attribute (S) and the partition key, projecting all attributes,
 * through which one slot's items are read with Query instead of a table scan (docs/fingerprint.md).
 */
public final class TargetTable {
    /**
     * Items asked of one page of a Query or Scan that reads many. DynamoDB ends a page at 1 MB first (about 2,600
     * items of 400 bytes), so there this changes nothing; DynamoDB Local, unless a Limit bounds it, reads every item
     * left under the key condition for each page and keeps a whole unbounded scan in memory: one slot of 100,000 items
     * was read at 18,600 items/s without it and 98,600 with it.
     */
    public static final int PAGE_ITEMS = 5_000;

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
        check(dynamo, table, TableKey.single(partitionKey, keyType, partitionKey), index, where);
    }

    /**
     * The table's key is the source key's: the partition key, and the sort key for a two-column key, named and typed
     * as the key's attributes.
     *
     * @throws RebalanceException TARGET_UNREACHABLE, TARGET_TABLE_MISSING or TARGET_KEY_SCHEMA
     */
    public static void check(DynamoDbClient dynamo, String table, TableKey key, SlotIndex index, String where) {
        TableDescription d = describe(dynamo, table, where);
        if (d == null) {
            throw new RebalanceException(
                    ErrorCode.TARGET_TABLE_MISSING,
                    "DynamoDB table '" + table + "' does not exist at " + where + "; create it with " + wanted(key)
                            + ", or run `rebalance copy --create-table`");
        }
        var keys = d.keySchema();
        boolean fits = keys.size() == key.attributes().size();
        for (int i = 0; fits && i < keys.size(); i++) {
            String attribute = key.attributes().get(i);
            ScalarAttributeType type = d.attributeDefinitions().stream()
                    .filter(a -> a.attributeName().equals(attribute))
                    .map(AttributeDefinition::attributeType)
                    .findFirst()
                    .orElse(null);
            fits = keys.get(i).keyType() == (i == 0 ? KeyType.HASH : KeyType.RANGE)
                    && keys.get(i).attributeName().equals(attribute)
                    && type == attributeType(key.types().get(i));
        }
        if (!fits) {
            String found = keys.stream()
                            .map(k -> k.attributeName() + " " + k.keyType())
                            .toList() + " with types "
                    + d.attributeDefinitions().stream()
                            .map(a -> a.attributeName() + ":" + a.attributeType())
                            .toList();
            throw new RebalanceException(
                    ErrorCode.TARGET_KEY_SCHEMA,
                    "DynamoDB table '" + table + "' has key " + found + "; the source key " + key.describe()
                            + " needs " + needed(key) + ". Point target.table at a table with that key, or set"
                            + " target.partitionKey" + (key.composite() ? " and target.sortKey" : "")
                            + " to its key attributes");
        }
        String partitionKey = key.partitionAttribute();
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

    /** The key a table is created with, in words: {@code partition key id (S)}, plus {@code and sort key id (N)}. */
    private static String wanted(TableKey key) {
        String out = "partition key " + key.partitionAttribute() + " ("
                + attributeType(key.types().get(0)) + ")";
        return key.composite()
                ? out + " and sort key " + key.sortAttribute() + " ("
                        + attributeType(key.types().get(1)) + ")"
                : out;
    }

    /** The key a table must have, in words: {@code exactly one partition key id of type S}, or both keys. */
    private static String needed(TableKey key) {
        String pk = "partition key " + key.partitionAttribute() + " of type "
                + attributeType(key.types().get(0));
        return key.composite()
                ? "a " + pk + " and a sort key " + key.sortAttribute() + " of type "
                        + attributeType(key.types().get(1))
                : "exactly one " + pk;
    }

    /** Creates the table with its slot index on demand (pay per request) and waits until it is active. */
    public static void create(
            DynamoDbClient dynamo,
            String table,
            String partitionKey,
            io.rebalance.core.slot.KeyType keyType,
            SlotIndex index) {
        create(dynamo, table, TableKey.single(partitionKey, keyType, partitionKey), index);
    }

    /** Creates the table keyed as {@code key}, with its slot index, on demand, and waits until it is active. */
    public static void create(DynamoDbClient dynamo, String table, TableKey key, SlotIndex index) {
        KeySchemaElement hashKey = KeySchemaElement.builder()
                .attributeName(key.partitionAttribute())
                .keyType(KeyType.HASH)
                .build();
        List<KeySchemaElement> schema = new ArrayList<>(List.of(hashKey));
        List<AttributeDefinition> attributes = new ArrayList<>();
        for (int i = 0; i < key.attributes().size(); i++) {
            if (i > 0)
                schema.add(KeySchemaElement.builder()
                        .attributeName(key.attributes().get(i))
                        .keyType(KeyType.RANGE)
                        .build());
            attributes.add(AttributeDefinition.builder()
                    .attributeName(key.attributes().get(i))
                    .attributeType(attributeType(key.types().get(i)))
                    .build());
        }
        attributes.add(AttributeDefinition.builder()
                .attributeName(index.attribute())
                .attributeType(ScalarAttributeType.S)
                .build());
        dynamo.createTable(CreateTableRequest.builder()
                .tableName(table)
                .keySchema(schema)
                .attributeDefinitions(attributes)
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
        return IntStream.range(0, segments)
                .parallel()
                .mapToLong(segment -> {
                    long n = 0;
                    Map<String, AttributeValue> start = null;
                    do {
                        var from = start;
                        var r = dynamo.scan(b -> b.tableName(table)
                                .select(Select.COUNT)
                                .segment(segment)
                                .totalSegments(segments)
                                .limit(PAGE_ITEMS)
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
