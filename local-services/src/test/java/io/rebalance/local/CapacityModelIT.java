package io.rebalance.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rebalance.core.dynamo.WriteCapacity;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemResponse;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.GlobalSecondaryIndex;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.Projection;
import software.amazon.awssdk.services.dynamodb.model.ProjectionType;
import software.amazon.awssdk.services.dynamodb.model.ProvisionedThroughputExceededException;
import software.amazon.awssdk.services.dynamodb.model.PutRequest;
import software.amazon.awssdk.services.dynamodb.model.ReturnConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * The capacity model in front of DynamoDB Local charges writes as DynamoDB does (per started kilobyte, and again for
 * an index whose key the item holds) and refuses what exceeds the table's budget or one partition's 1,000 units as
 * DynamoDB does: items handed back from a batch, a throttling exception naming its reason. Bounds, not timings: what
 * it lets through never exceeds the budget over the time it was measured.
 */
class CapacityModelIT {
    private static final String PAD_1K = "x".repeat(1_400);
    private static final String PAD_9K = "x".repeat(9_400);
    /** About 97 units a put: far more than refills while one is sent, however slow the machine. */
    private static final String PAD_99K = "x".repeat(99_000);

    @Test
    void writesAreChargedAndWhatExceedsTheBudgetIsRefusedWithItsReason() throws Exception {
        try (DynamoDbLocalServer local = DynamoDbLocalServer.start(0);
                // one partition: the table's budget is spent first, whichever partition an item hashes to
                CapacityModel model = CapacityModel.start(local.endpoint(), 1_000);
                DynamoDbClient dynamo = client(model.endpoint())) {
            create(dynamo, "events", false);
            // 25 items of about 1.4 KB, each with the index's key: 2 units on the table and 2 on the index
            BatchWriteItemResponse fits =
                    dynamo.batchWriteItem(b -> b.requestItems(Map.of("events", batch(0, PAD_1K))));
            assertThat(fits.unprocessedItems().getOrDefault("events", List.of()))
                    .isEmpty();
            assertThat(model.consumedUnits()).isEqualTo(25 * 4);
            assertThat(dynamo.getItem(b -> b.tableName("events").key(Map.of("id", s("i7"))))
                            .item())
                    .as("written through to DynamoDB Local")
                    .containsKey("pad");

            // a burst of 9.4 KB items (10 + 10 units each): past the budget, items come back unprocessed
            long start = System.nanoTime();
            long consumedBefore = model.consumedUnits();
            int handedBack = 0;
            for (int n = 1; n <= 200 && handedBack == 0; n++) {
                BatchWriteItemResponse r =
                        dynamo.batchWriteItem(b -> b.requestItems(Map.of("events", batch(25 * 40, PAD_9K))));
                handedBack =
                        r.unprocessedItems().getOrDefault("events", List.of()).size();
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            assertThat(handedBack)
                    .as("items handed back once the budget is spent")
                    .isPositive();
            assertThat(model.throttledItems()).isGreaterThanOrEqualTo(handedBack);
            assertThat(model.consumedUnits() - consumedBefore)
                    .as("charged over %.2f s: at most the bucket's second plus what refilled", seconds)
                    .isLessThanOrEqualTo((long) (1_000 + seconds * 1_000) + 1);
            // with nothing left, a put is refused with DynamoDB's exception and its reason
            assertThatThrownBy(() -> {
                        for (int n = 0; n < 2_000; n++) put(dynamo, "events", "p" + n, PAD_99K, true);
                    })
                    .isInstanceOf(ProvisionedThroughputExceededException.class)
                    .satisfies(e -> assertThat(((ProvisionedThroughputExceededException) e).throttlingReasons())
                            .extracting(r -> r.reason())
                            .containsExactly("TableWriteProvisionedThroughputExceeded"));
        }
    }

    @Test
    void onePartitionKeyTakesAtMostAThousandUnitsASecond() throws Exception {
        try (DynamoDbLocalServer local = DynamoDbLocalServer.start(0);
                CapacityModel model = CapacityModel.start(local.endpoint(), 2_000);
                DynamoDbClient dynamo = client(model.endpoint())) {
            create(dynamo, "hot", true);
            long start = System.nanoTime();
            ProvisionedThroughputExceededException refused = null;
            for (int n = 0; n < 2_000 && refused == null; n++) {
                try {
                    put(dynamo, "hot", "sk" + n, PAD_99K, false); // 97 units, one partition key
                } catch (ProvisionedThroughputExceededException e) {
                    refused = e;
                }
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            assertThat(refused)
                    .as("refused before the table's 2,000 units were spent")
                    .isNotNull();
            assertThat(refused.throttlingReasons())
                    .extracting(r -> r.reason())
                    .containsExactly("KeyRangeThroughputExceeded");
            assertThat(model.consumedUnits()).isLessThanOrEqualTo((long) (1_000 + seconds * 1_000) + 1);
        }
    }

    @Test
    void aWriteIsToldTheUnitsChargedAndWarmThroughputIsKeptPerTable() throws Exception {
        try (DynamoDbLocalServer local = DynamoDbLocalServer.start(0);
                CapacityModel model = CapacityModel.start(local.endpoint(), 10_000);
                DynamoDbClient dynamo = client(model.endpoint());
                DynamoDbClient direct = client(local.endpoint())) {
            create(dynamo, "metered", false);
            BatchWriteItemResponse r = dynamo.batchWriteItem(b -> b.requestItems(Map.of("metered", batch(0, PAD_1K)))
                    .returnConsumedCapacity(ReturnConsumedCapacity.TOTAL));
            assertThat(r.consumedCapacity())
                    .singleElement()
                    .satisfies(c -> assertThat(c.tableName()).isEqualTo("metered"))
                    .satisfies(c -> assertThat(c.capacityUnits()).isEqualTo(100.0));
            assertThat(model.consumedUnits()).isEqualTo(100);

            // a new on-demand table takes 4,000 writes/s at once; DynamoDB Local keeps no warm throughput, the model
            // does
            assertThat(WriteCapacity.of(dynamo, "metered")).isEqualTo(new WriteCapacity(true, 4_000));
            assertThat(WriteCapacity.warm(direct, "metered", 12_000))
                    .as("DynamoDB Local ignores it, and says so")
                    .isNotNull();
            assertThat(WriteCapacity.warm(dynamo, "metered", 12_000)).isNull();
            assertThat(model.warmWriteUnits("metered")).isEqualTo(12_000);
            assertThat(WriteCapacity.of(dynamo, "metered")).isEqualTo(new WriteCapacity(true, 12_000));
            assertThat(WriteCapacity.warm(dynamo, "metered", 8_000))
                    .as("already warmer")
                    .isNull();
            assertThat(model.warmWriteUnits("metered")).isEqualTo(12_000);
        }
    }

    private static Map<String, AttributeValue> item(String id, String pad, boolean indexed) {
        Map<String, AttributeValue> item = new HashMap<>();
        item.put("id", s(id));
        item.put("pad", s(pad));
        if (indexed) item.put("_slot", s("20241020.02"));
        return item;
    }

    private static List<WriteRequest> batch(int from, String pad) {
        List<WriteRequest> out = new ArrayList<>();
        for (int i = from; i < from + 25; i++) {
            Map<String, AttributeValue> item = item("i" + i, pad, true);
            out.add(WriteRequest.builder()
                    .putRequest(PutRequest.builder().item(item).build())
                    .build());
        }
        return out;
    }

    private static void put(DynamoDbClient dynamo, String table, String id, String pad, boolean indexed) {
        Map<String, AttributeValue> item = item(id, pad, indexed);
        if (table.equals("hot")) {
            item.put("sk", item.remove("id"));
            item.put("pk", s("the one"));
        }
        dynamo.putItem(b -> b.tableName(table).item(item));
    }

    private static void create(DynamoDbClient dynamo, String table, boolean oneKey) {
        if (oneKey) {
            dynamo.createTable(b -> b.tableName(table)
                    .billingMode(BillingMode.PAY_PER_REQUEST)
                    .attributeDefinitions(attr("pk"), attr("sk"))
                    .keySchema(key("pk", KeyType.HASH), key("sk", KeyType.RANGE)));
            return;
        }
        dynamo.createTable(b -> b.tableName(table)
                .billingMode(BillingMode.PAY_PER_REQUEST)
                .attributeDefinitions(attr("id"), attr("_slot"))
                .keySchema(key("id", KeyType.HASH))
                .globalSecondaryIndexes(GlobalSecondaryIndex.builder()
                        .indexName("by_slot")
                        .keySchema(key("_slot", KeyType.HASH), key("id", KeyType.RANGE))
                        .projection(Projection.builder()
                                .projectionType(ProjectionType.ALL)
                                .build())
                        .build()));
    }

    private static AttributeDefinition attr(String name) {
        return AttributeDefinition.builder()
                .attributeName(name)
                .attributeType(ScalarAttributeType.S)
                .build();
    }

    private static KeySchemaElement key(String name, KeyType type) {
        return KeySchemaElement.builder().attributeName(name).keyType(type).build();
    }

    private static AttributeValue s(String v) {
        return AttributeValue.fromS(v);
    }

    /** A client that does not retry, so each refusal reaches the test as DynamoDB gave it. */
    private static DynamoDbClient client(String endpoint) {
        return DynamoDbClient.builder()
                .endpointOverride(URI.create(endpoint))
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local")))
                .overrideConfiguration(o -> o.retryStrategy(AwsRetryStrategy.doNotRetry()))
                .build();
    }
}
