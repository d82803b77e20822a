package io.rebalance.protocol.fence;

import io.rebalance.protocol.route.RouteStatus;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;
import software.amazon.awssdk.services.dynamodb.model.ConditionCheck;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.GetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.Put;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;
import software.amazon.awssdk.services.dynamodb.model.Update;

/**
 * The DynamoDB side of the fence: one item per scope, or several (stripes) that hold the same state, in a small table
 * of its own; every guarded write checks one of them, drawn at random, in the same {@code TransactWriteItems} as the write
 * ({@link #conditionCheck}). DynamoDB evaluates the check and the write atomically, so a write whose token the cutover
 * has fenced off is never applied (ADR 7). Every change of who may write changes all the stripes in one transaction,
 * so they never disagree; the first stripe, the scope's own item, also keeps the route (ADR 19).
 */
public final class DynamoFence {
    /**
     * The most stripes a scope may have: a set writes them all in one {@code TransactWriteItems}, of at most 100
     * actions.
     */
    public static final int MAX_STRIPES = 99;

    private static final String SCOPE = "scope";
    private static final String STRIPES_ATTRIBUTE = "stripes";
    /** A set that meets a guarded write's check in flight on a stripe tries again, this many times at most. */
    private static final int SET_ATTEMPTS = 100;

    private final DynamoDbClient dynamo;
    private final String table;
    /** A scope's stripe count never changes once installed: read once. */
    private final ConcurrentMap<String, Integer> stripes = new ConcurrentHashMap<>();

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

    /** {@link #install(String, int)} with one item. */
    public void install(String scope) {
        install(scope, 1);
    }

    /**
     * Creates the fence table (on-demand) and the scope's {@code count} items (writer {@code none}) unless they exist:
     * a scope installed before keeps its items, however many. More than one spreads the guarded writes' checks, which
     * on DynamoDB conflict when two transactions in flight check the same item; each costs a set one action more.
     */
    public void install(String scope, int count) {
        if (count < 1 || count > MAX_STRIPES)
            throw new IllegalArgumentException("stripes=" + count + ": from 1 to " + MAX_STRIPES);
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
        List<TransactWriteItem> puts = new ArrayList<>(count);
        for (int k = 0; k < count; k++) {
            Map<String, AttributeValue> item = new HashMap<>(
                    Map.of(SCOPE, s(stripeKey(scope, k)), "writer", s(FenceWriter.NONE.wire()), "min_token", n(0)));
            if (k == 0) {
                item.put("route", s(RouteStatus.SOURCE.name()));
                item.put("epoch", n(1));
                item.put(STRIPES_ATTRIBUTE, n(count));
            }
            puts.add(TransactWriteItem.builder()
                    .put(Put.builder()
                            .tableName(table)
                            .item(item)
                            .conditionExpression("attribute_not_exists(#s)")
                            .expressionAttributeNames(Map.of("#s", SCOPE))
                            .build())
                    .build());
        }
        try {
            dynamo.transactWriteItems(b -> b.transactItems(puts)); // all the stripes or none
        } catch (TransactionCanceledException e) {
            if (!exists(scope)) throw e;
            // installed before: keep its state (an install from before stripes keeps its one item)
        }
    }

    private boolean exists(String scope) {
        return dynamo.getItem(b -> b.tableName(table).key(key(scope, 0)).consistentRead(true))
                .hasItem();
    }

    /** The stripes of {@code scope}: 1 for a scope installed before stripes, or not installed (its check fails). */
    public int stripes(String scope) {
        Integer known = stripes.get(scope);
        if (known != null) return known;
        GetItemResponse r =
                dynamo.getItem(b -> b.tableName(table).key(key(scope, 0)).consistentRead(true));
        if (!r.hasItem() || r.item().isEmpty()) return 1;
        AttributeValue n = r.item().get(STRIPES_ATTRIBUTE);
        int count = n == null ? 1 : Integer.parseInt(n.n());
        stripes.put(scope, count);
        return count;
    }

    /** Stripe 0 is the scope's own item, so a fence installed before stripes is its stripe 0. */
    static String stripeKey(String scope, int stripe) {
        return stripe == 0 ? scope : scope + "#stripe" + stripe;
    }

    private static Map<String, AttributeValue> key(String scope, int stripe) {
        return Map.of(SCOPE, s(stripeKey(scope, stripe)));
    }

    /**
     * The check to put first in a guarded write's {@code TransactWriteItems}, on a stripe drawn at random: every stripe
     * holds the same state, so any one fences the write; a random one spreads the writers evenly without reading keys.
     */
    public TransactWriteItem conditionCheck(String scope, long token) {
        int stripe = ThreadLocalRandom.current().nextInt(stripes(scope));
        return TransactWriteItem.builder()
                .conditionCheck(ConditionCheck.builder()
                        .tableName(table)
                        .key(key(scope, stripe))
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

    /**
     * Whether a cancelled guarded write met another transaction on its fence stripe (on DynamoDB, two transactions
     * that include the same item conflict while either is in flight): nothing was applied, and it may be sent again.
     */
    public static boolean conflictedOnFence(TransactionCanceledException e) {
        var reasons = e.cancellationReasons();
        return !reasons.isEmpty() && "TransactionConflict".equals(reasons.get(0).code());
    }

    /** The fence, or empty when its table or the scope's item does not exist (never prepared). */
    public Optional<FenceState> find(String scope) {
        try {
            return Optional.of(state(scope));
        } catch (ResourceNotFoundException | IllegalStateException notInstalled) {
            return Optional.empty();
        }
    }

    public FenceState state(String scope) {
        GetItemResponse r =
                dynamo.getItem(b -> b.tableName(table).key(key(scope, 0)).consistentRead(true));
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
     * Sets the fence on every stripe at once; transactions that checked the old state either committed before or fail
     * their check.
     *
     * @return the fence as set (its route and epoch as they are: a set changes neither)
     * @throws TokenBehindException when {@code minToken} is below the fence's (nothing is changed: tokens only rise)
     */
    public FenceState set(String scope, FenceWriter writer, long minToken) {
        return apply(scope, writer, minToken, null, 0);
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
        return apply(scope, writer, minToken, route, epoch);
    }

    /** @param route null for a set that records nothing */
    private FenceState apply(String scope, FenceWriter writer, long minToken, RouteStatus route, long epoch) {
        Map<String, String> names = new HashMap<>(Map.of("#w", "writer", "#m", "min_token", "#s", SCOPE));
        Map<String, AttributeValue> values = new HashMap<>(Map.of(":w", s(writer.wire()), ":m", n(minToken)));
        String set = "SET #w = :w, #m = :m";
        String condition = "attribute_exists(#s) AND #m <= :m";
        if (route != null) {
            names.putAll(Map.of("#r", "route", "#e", "epoch"));
            values.putAll(Map.of(":r", s(route.name()), ":e", n(epoch)));
            set += ", #r = :r, #e = :e";
            condition += " AND (attribute_not_exists(#e) OR #e <= :e)";
        }
        int count = stripes(scope);
        if (count == 1) {
            String update = set;
            String check = condition;
            try {
                return state(dynamo.updateItem(b -> b.tableName(table)
                                .key(key(scope, 0))
                                .updateExpression(update)
                                .conditionExpression(check)
                                .expressionAttributeNames(names)
                                .expressionAttributeValues(values)
                                .returnValues(ReturnValue.ALL_NEW))
                        .attributes());
            } catch (ConditionalCheckFailedException e) {
                throw refused(scope, minToken, route, epoch);
            }
        }
        List<TransactWriteItem> updates = new ArrayList<>(count);
        Map<String, String> stripeNames = Map.of("#w", "writer", "#m", "min_token", "#s", SCOPE);
        Map<String, AttributeValue> stripeValues = Map.of(":w", s(writer.wire()), ":m", n(minToken));
        for (int k = 0; k < count; k++) {
            boolean head = k == 0;
            updates.add(TransactWriteItem.builder()
                    .update(Update.builder()
                            .tableName(table)
                            .key(key(scope, k))
                            .updateExpression(head ? set : "SET #w = :w, #m = :m")
                            .conditionExpression(head ? condition : "attribute_exists(#s) AND #m <= :m")
                            .expressionAttributeNames(head ? names : stripeNames)
                            .expressionAttributeValues(head ? values : stripeValues)
                            .build())
                    .build());
        }
        for (int attempt = 1; ; attempt++) {
            try {
                dynamo.transactWriteItems(b -> b.transactItems(updates));
                return state(scope);
            } catch (TransactionCanceledException e) {
                var codes = e.cancellationReasons().stream()
                        .map(CancellationReason::code)
                        .toList();
                if (codes.contains("ConditionalCheckFailed")) throw refused(scope, minToken, route, epoch);
                if (!codes.contains("TransactionConflict") || attempt == SET_ATTEMPTS) throw e;
                // a guarded write's check was in flight on a stripe: it ends within its own round trip
                LockSupport.parkNanos(Math.min(attempt, 10) * 1_000_000L);
            }
        }
    }

    private RuntimeException refused(String scope, long minToken, RouteStatus route, long epoch) {
        FenceState now = state(scope); // not installed: says so
        if (now.minToken() > minToken) return new TokenBehindException("DynamoDB", scope, minToken, now.minToken());
        if (route != null)
            return new IllegalStateException("the DynamoDB fence of scope '" + scope + "' records epoch " + now.epoch()
                    + ", newer than this flip's " + epoch + ": another command flipped since");
        return new IllegalStateException("the DynamoDB fence of scope '" + scope + "' refused the set to " + minToken
                + " (" + now + "); run `rebalance cutover --prepare` to install it");
    }

    /** Records the route a flip moves to, with its epoch; an older epoch never replaces a newer one. */
    public void record(String scope, RouteStatus route, long epoch) {
        try {
            dynamo.updateItem(b -> b.tableName(table)
                    .key(key(scope, 0))
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
