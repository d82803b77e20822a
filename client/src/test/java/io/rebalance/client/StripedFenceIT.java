package io.rebalance.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rebalance.protocol.fence.DynamoFence;
import io.rebalance.protocol.fence.FenceWriter;
import io.rebalance.protocol.fence.FencedException;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.route.RouteStatus;
import io.rebalance.protocol.route.RoutingTable;
import io.rebalance.testkit.SharedServices;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttribute;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.CancellationReason;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.Put;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;

/**
 * The DynamoDB fence striped (ADR 19): guarded writes to different keys run at once without queueing on one fence
 * item, and a set still fences every stripe. DynamoDB cancels a transaction that includes an item another transaction
 * in flight includes ({@code TransactionConflict}); DynamoDB Local runs transactions one at a time and never does, so
 * {@link Conflicts} plays that rule on the client, and holds the first transactions in flight until enough are there.
 */
class StripedFenceIT {
    private static final String SCOPE = "room_events";
    private static final int WRITERS = 16;
    private static final int STRIPES = 64;

    private final SharedServices services = SharedServices.get();
    private final UnifiedJedis redis = services.redis();
    private final Conflicts conflicts = new Conflicts();
    private final DynamoDbClient dynamo = client(conflicts);
    private final String prefix = SharedServices.unique("striped") + ":";
    private final String items = SharedServices.unique("events");
    private final GuardSettings settings = new GuardSettings(
            prefix,
            Duration.ofSeconds(5),
            Duration.ofSeconds(5),
            "public." + SharedServices.unique("fence"),
            SharedServices.unique("fence"));
    private final DynamoFence fence = new DynamoFence(dynamo, settings.dynamoFenceTable());

    @BeforeEach
    void prepare() {
        fence.install(SCOPE, STRIPES);
        fence.set(SCOPE, FenceWriter.APP, 0);
        dynamo.createTable(b -> b.tableName(items)
                .billingMode(BillingMode.PAY_PER_REQUEST)
                .attributeDefinitions(AttributeDefinition.builder()
                        .attributeName("id")
                        .attributeType(ScalarAttributeType.S)
                        .build())
                .keySchema(KeySchemaElement.builder()
                        .attributeName("id")
                        .keyType(KeyType.HASH)
                        .build()));
        new RoutingTable(redis, new Keyspace(prefix)).create(SCOPE, RouteStatus.FINAL, 1); // DynamoDB, no log
    }

    @AfterEach
    void close() {
        redis.close();
        dynamo.close();
    }

    @Test
    void concurrentGuardedWritesToDifferentKeysDoNotQueueOnOneFenceItem() throws Exception {
        conflicts.holdFirst(WRITERS); // the first 16 transactions stay in flight until all 16 are
        ExecutorService pool = Executors.newFixedThreadPool(WRITERS);
        try (WriteGuard guard = new WriteGuard(redis, dynamo, settings)) {
            List<Future<?>> all = new ArrayList<>();
            for (int t = 0; t < WRITERS; t++) {
                int writer = t;
                all.add(pool.submit(() -> {
                    for (int i = 0; i < 20; i++) {
                        String id = writer + "-" + i;
                        guard.run(SCOPE, permit -> permit.writeDynamo(dynamo, put(id)));
                    }
                    return null;
                }));
            }
            for (Future<?> f : all) f.get(60, TimeUnit.SECONDS); // a write that failed fails the test here
        } finally {
            pool.shutdownNow();
        }
        assertThat(conflicts.wave.await(0, TimeUnit.SECONDS))
                .as("16 guarded writes were in flight at once, each on a fence stripe of its own")
                .isTrue();
        assertThat(conflicts.peak.get()).isGreaterThanOrEqualTo(WRITERS);
        assertThat(conflicts.fenceItems)
                .as("the writes spread over the stripes")
                .hasSizeGreaterThan(32);
        assertThat(conflicts.cancelled.get())
                .as("writes that met on a stripe were cancelled, as DynamoDB cancels them, and went again")
                .isPositive();
        assertThat(count()).isEqualTo(WRITERS * 20);
    }

    @Test
    void aSetMeetingAWriteInFlightGoesAgainAndFencesEveryStripe() throws Exception {
        try (WriteGuard guard = new WriteGuard(redis, dynamo, settings)) {
            // the guarded write stays in flight until released: a wave of two never forms by itself (the set, meeting
            // the write's stripe, is cancelled before it is admitted), where a wave of one let the write go at once
            conflicts.holdFirst(2);
            CompletableFuture<Void> write = CompletableFuture.runAsync(() -> {
                try {
                    guard.run(SCOPE, permit -> permit.writeDynamo(dynamo, put("in-flight")));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThat(conflicts.arrived.await(10, TimeUnit.SECONDS)).isTrue();
            CompletableFuture<Void> close =
                    CompletableFuture.runAsync(() -> fence.set(SCOPE, FenceWriter.APP, Long.MAX_VALUE / 2));
            while (conflicts.cancelled.get() == 0 && !close.isDone()) Thread.onSpinWait(); // ... the set meets it
            assertThat(close).as("the set waits for the write in flight").isNotDone();
            conflicts.release();
            write.get(10, TimeUnit.SECONDS);
            close.get(10, TimeUnit.SECONDS);
            assertThat(count()).as("the write in flight landed before the set").isEqualTo(1);
            for (Map<String, AttributeValue> stripe : stripes()) {
                assertThat(stripe.get("min_token").n()).isEqualTo(Long.toString(Long.MAX_VALUE / 2));
            }
            for (int i = 0; i < 3 * STRIPES; i++) { // random stripes: every one is drawn, near certainly
                String id = "late-" + i;
                assertThatThrownBy(() -> guard.run(SCOPE, permit -> permit.writeDynamo(dynamo, put(id))))
                        .isInstanceOf(FencedException.class);
            }
            assertThat(count()).isEqualTo(1);
        }
    }

    @Test
    void aFenceInstalledBeforeStripesKeepsItsOneItem() throws Exception {
        String legacy = "legacy_scope";
        dynamo.putItem(b -> b.tableName(settings.dynamoFenceTable())
                .item(Map.of(
                        "scope", AttributeValue.fromS(legacy),
                        "writer", AttributeValue.fromS("app"),
                        "min_token", AttributeValue.fromN("0"))));
        fence.install(legacy);
        assertThat(fence.stripes(legacy)).isEqualTo(1);
        new RoutingTable(redis, new Keyspace(prefix)).create(legacy, RouteStatus.FINAL, 1);
        try (WriteGuard guard = new WriteGuard(redis, dynamo, settings)) {
            guard.run(legacy, permit -> permit.writeDynamo(dynamo, put("old")));
            fence.set(legacy, FenceWriter.NONE, 1);
            assertThatThrownBy(() -> guard.run(legacy, permit -> permit.writeDynamo(dynamo, put("new"))))
                    .isInstanceOf(FencedException.class);
        }
        assertThat(count()).isEqualTo(1);
    }

    private List<Map<String, AttributeValue>> stripes() {
        List<Map<String, AttributeValue>> out = new ArrayList<>();
        for (Map<String, AttributeValue> item : dynamo.scan(
                        b -> b.tableName(settings.dynamoFenceTable()).consistentRead(true))
                .items()) {
            String scope = item.get("scope").s();
            if (scope.equals(SCOPE) || scope.startsWith(SCOPE + "#")) out.add(item);
        }
        assertThat(out).hasSize(STRIPES);
        return out;
    }

    private TransactWriteItem put(String id) {
        return TransactWriteItem.builder()
                .put(Put.builder()
                        .tableName(items)
                        .item(Map.of("id", AttributeValue.fromS(id), "body", AttributeValue.fromS("x")))
                        .build())
                .build();
    }

    private long count() {
        return dynamo.scan(b -> b.tableName(items).select("COUNT").consistentRead(true))
                .count();
    }

    private static DynamoDbClient client(ExecutionInterceptor interceptor) {
        return DynamoDbClient.builder()
                .endpointOverride(
                        java.net.URI.create(SharedServices.get().dynamo.endpoint()))
                .region(Region.US_EAST_1)
                .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("local", "local")))
                .overrideConfiguration(c -> c.addExecutionInterceptor(interceptor))
                .httpClientBuilder(software.amazon.awssdk.http.apache.ApacheHttpClient.builder()
                        .maxConnections(2 * WRITERS))
                .build();
    }

    /**
     * DynamoDB's rule for transactions, played on the client: a {@code TransactWriteItems} that includes an item some
     * other one in flight includes is cancelled with {@code TransactionConflict} on that item. The first {@code n}
     * transactions admitted are held before they are sent until {@code n} are in flight (or {@link #release}).
     */
    static final class Conflicts implements ExecutionInterceptor {
        private static final ExecutionAttribute<Set<String>> KEYS = new ExecutionAttribute<>("striped-fence-keys");
        private final Map<String, Boolean> inFlight = new HashMap<>();
        final Set<String> fenceItems = ConcurrentHashMap.newKeySet();
        final AtomicInteger cancelled = new AtomicInteger();
        final AtomicInteger peak = new AtomicInteger();
        final CountDownLatch arrived = new CountDownLatch(1);
        private final AtomicInteger admitted = new AtomicInteger();
        private int transactions; // in flight, under inFlight's lock
        volatile CountDownLatch wave = new CountDownLatch(0);
        private volatile int held;

        void holdFirst(int n) {
            admitted.set(0); // the install and the set before count for nothing
            held = n;
            wave = new CountDownLatch(n);
        }

        void release() {
            while (wave.getCount() > 0) wave.countDown();
        }

        @Override
        public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
            if (!(context.request() instanceof TransactWriteItemsRequest req)) return;
            List<String> keys = new ArrayList<>();
            for (TransactWriteItem i : req.transactItems()) {
                if (i.conditionCheck() != null) {
                    keys.add(i.conditionCheck().tableName() + i.conditionCheck().key());
                    fenceItems.add(i.conditionCheck().key().toString());
                } else if (i.update() != null)
                    keys.add(i.update().tableName() + i.update().key());
                else if (i.put() != null)
                    keys.add(i.put().tableName() + "/" + i.put().item().get("id"));
                else if (i.delete() != null)
                    keys.add(i.delete().tableName() + i.delete().key());
            }
            List<CancellationReason> reasons = new ArrayList<>();
            synchronized (inFlight) {
                boolean conflict = false;
                for (String k : keys) {
                    boolean busy = inFlight.containsKey(k);
                    conflict |= busy;
                    reasons.add(CancellationReason.builder()
                            .code(busy ? "TransactionConflict" : "None")
                            .build());
                }
                if (!conflict) {
                    keys.forEach(k -> inFlight.put(k, true));
                    peak.accumulateAndGet(++transactions, Math::max);
                }
                if (conflict) {
                    cancelled.incrementAndGet();
                    throw TransactionCanceledException.builder()
                            .cancellationReasons(reasons)
                            .statusCode(400)
                            .awsErrorDetails(AwsErrorDetails.builder()
                                    .errorCode("TransactionCanceledException")
                                    .errorMessage("Transaction cancelled, please refer cancellation reasons for"
                                            + " specific reasons " + reasons + " (played by StripedFenceIT)")
                                    .build())
                            .build();
                }
            }
            attributes.putAttribute(KEYS, new HashSet<>(keys));
            if (admitted.incrementAndGet() <= held) {
                arrived.countDown();
                wave.countDown();
                try {
                    if (!wave.await(30, TimeUnit.SECONDS)) throw new IllegalStateException("the wave never formed");
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        @Override
        public void afterExecution(Context.AfterExecution context, ExecutionAttributes attributes) {
            done(attributes);
        }

        @Override
        public void onExecutionFailure(Context.FailedExecution context, ExecutionAttributes attributes) {
            done(attributes);
        }

        private void done(ExecutionAttributes attributes) {
            Set<String> keys = attributes.getAttribute(KEYS);
            if (keys == null) return;
            synchronized (inFlight) {
                keys.forEach(inFlight::remove);
                transactions--;
            }
        }
    }
}
