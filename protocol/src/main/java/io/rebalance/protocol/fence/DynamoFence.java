package io.rebalance.protocol.fence;

import io.rebalance.protocol.route.RouteStatus;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.ConditionCheck;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.GetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;

/**
 * The DynamoDB side of the fence: an item per scope in a small table of its own, which every guarded write checks in
 * the same {@code TransactWriteItems} as the write ({@link #conditionCheck}). DynamoDB evaluates the check and the
 * write atomically, so a write whose token the cutover has fenced off is never applied (ADR 7).
 */
public final class DynamoFence {
    private static final String SCOPE = "scope";

    private final DynamoDbClient dynamo;
    private final String table;

    public DynamoFence(DynamoDbClient dynamo, String table) {
        this.dynamo = dynamo;
        this.table = table;
    }

    public String table() {
        return table;
    }

    public DynamoDbClient client() {
        return dynamo;
    }

    /** Creates the fence table (on-demand) and the scope's item (writer {@code none}) unless they exist. */
    public void install(String scope) {
        try {
            dynamo.describeTable(b -> b.tableName(table));
        } catch (ResourceNotFoundException e) {
            dynamo.createTable(b -> b.tableName(table)
                    .billingMode(BillingMode.PAY_PER_REQUEST)
                    .attributeDefinitions(AttributeDefinition.builder()
                            .attributeName(SCOPE)
                            .attributeType(ScalarAttributeType.S)
                            .build())
                    .keySchema(KeySchemaElement.builder()
                            .attributeName(SCOPE)
                            .keyType(KeyType.HASH)
                            .build()));
            dynamo.waiter().waitUntilTableExists(b -> b.tableName(table));
        }
        try {
            dynamo.putItem(b -> b.tableName(table)
                    .item(Map.of(
                            SCOPE,
                            s(scope),
                            "writer",
                            s(FenceWriter.NONE.wire()),
                            "min_token",
                            n(0),
                            "route",
                            s(RouteStatus.SOURCE.name()),
                            "epoch",
                            n(1)))
                    .conditionExpression("attribute_not_exists(#s)")
                    .expressionAttributeNames(Map.of("#s", SCOPE)));
        } catch (ConditionalCheckFailedException exists) {
            // installed before: keep its state
        }
    }

    /** The check to put first in a guarded write's {@code TransactWriteItems}. */
    public TransactWriteItem conditionCheck(String scope, long token) {
        return TransactWriteItem.builder()
                .conditionCheck(ConditionCheck.builder()
                        .tableName(table)
                        .key(Map.of(SCOPE, s(scope)))
                        .conditionExpression("#w = :app AND #m <= :t")
                        .expressionAttributeNames(Map.of("#w", "writer", "#m", "min_token"))
                        .expressionAttributeValues(Map.of(":app", s(FenceWriter.APP.wire()), ":t", n(token)))
                        .build())
                .build();
    }

    /**
     * Turns a cancelled transaction whose first item is {@link #conditionCheck} into {@link FencedException} when it
     * was the fence that refused; otherwise rethrows it.
     */
    public RuntimeException explain(TransactionCanceledException e, String scope, long token) {
        var reasons = e.cancellationReasons();
        if (!reasons.isEmpty() && "ConditionalCheckFailed".equals(reasons.get(0).code())) {
            return new FencedException("DynamoDB", scope, token, state(scope).toString());
        }
        return e;
    }

    /** The fence, or empty when its table or the scope's item does not exist (never prepared). */
    public java.util.Optional<FenceState> find(String scope) {
        try {
            return java.util.Optional.of(state(scope));
        } catch (ResourceNotFoundException | IllegalStateException notInstalled) {
            return java.util.Optional.empty();
        }
    }

    public FenceState state(String scope) {
        GetItemResponse r = dynamo.getItem(
                b -> b.tableName(table).key(Map.of(SCOPE, s(scope))).consistentRead(true));
        if (!r.hasItem() || r.item().isEmpty()) {
            throw new IllegalStateException("no item for scope '" + scope + "' in DynamoDB table " + table
                    + ": the fence is not installed; run `rebalance cutover --prepare` first");
        }
        return state(r.item());
    }

    private static FenceState state(Map<String, AttributeValue> item) {
        AttributeValue route = item.get("route");
        AttributeValue epoch = item.get("epoch");
        return new FenceState(
                FenceWriter.ofWire(item.get("writer").s()),
                Long.parseLong(item.get("min_token").n()),
                route == null ? RouteStatus.SOURCE : RouteStatus.valueOf(route.s()), // installed before it was kept
                epoch == null ? 1 : Long.parseLong(epoch.n()),
                0);
    }

    /**
     * Sets the fence; transactions that checked the old state either committed before or fail their check.
     *
     * @return the fence as set (its route and epoch as they are: a set changes neither)
     * @throws TokenBehindException when {@code minToken} is below the fence's (nothing is changed: tokens only rise)
     */
    public FenceState set(String scope, FenceWriter writer, long minToken) {
        try {
            return state(dynamo.updateItem(b -> b.tableName(table)
                            .key(Map.of(SCOPE, s(scope)))
                            .updateExpression("SET #w = :w, #m = :m")
                            .conditionExpression("attribute_exists(#s) AND #m <= :m")
                            .expressionAttributeNames(Map.of("#w", "writer", "#m", "min_token", "#s", SCOPE))
                            .expressionAttributeValues(Map.of(":w", s(writer.wire()), ":m", n(minToken)))
                            .returnValues(ReturnValue.ALL_NEW))
                    .attributes());
        } catch (ConditionalCheckFailedException e) {
            throw new TokenBehindException(
                    "DynamoDB", scope, minToken, state(scope).minToken());
        }
    }

    /**
     * Sets the fence and records the route a flip moves to, in one write: a cutover opens DynamoDB and records its
     * flip there together, after the Postgres fence recorded it (ADR 8).
     *
     * @return the fence as set
     * @throws TokenBehindException when {@code minToken} is below the fence's
     * @throws IllegalStateException when a newer epoch is recorded already (nothing is changed)
     */
    public FenceState setAndRecord(String scope, FenceWriter writer, long minToken, RouteStatus route, long epoch) {
        try {
            return state(dynamo.updateItem(b -> b.tableName(table)
                            .key(Map.of(SCOPE, s(scope)))
                            .updateExpression("SET #w = :w, #m = :m, #r = :r, #e = :e")
                            .conditionExpression(
                                    "attribute_exists(#s) AND #m <= :m AND (attribute_not_exists(#e) OR #e <= :e)")
                            .expressionAttributeNames(Map.of(
                                    "#w", "writer", "#m", "min_token", "#r", "route", "#e", "epoch", "#s", SCOPE))
                            .expressionAttributeValues(Map.of(
                                    ":w", s(writer.wire()), ":m", n(minToken), ":r", s(route.name()), ":e", n(epoch)))
                            .returnValues(ReturnValue.ALL_NEW))
                    .attributes());
        } catch (ConditionalCheckFailedException e) {
            FenceState now = state(scope);
            if (now.minToken() > minToken) throw new TokenBehindException("DynamoDB", scope, minToken, now.minToken());
            throw new IllegalStateException("the DynamoDB fence of scope '" + scope + "' records epoch " + now.epoch()
                    + ", newer than this flip's " + epoch + ": another command flipped since");
        }
    }

    /** Records the route a flip moves to, with its epoch; an older epoch never replaces a newer one. */
    public void record(String scope, RouteStatus route, long epoch) {
        try {
            dynamo.updateItem(b -> b.tableName(table)
                    .key(Map.of(SCOPE, s(scope)))
                    .updateExpression("SET #r = :r, #e = :e")
                    .conditionExpression("attribute_exists(#s) AND (attribute_not_exists(#e) OR #e <= :e)")
                    .expressionAttributeNames(Map.of("#r", "route", "#e", "epoch", "#s", SCOPE))
                    .expressionAttributeValues(Map.of(":r", s(route.name()), ":e", n(epoch))));
        } catch (ConditionalCheckFailedException newer) {
            // a newer flip recorded already: keep it
        }
    }

    private static AttributeValue s(String v) {
        return AttributeValue.builder().s(v).build();
    }

    private static AttributeValue n(long v) {
        return AttributeValue.builder().n(Long.toString(v)).build();
    }
}
