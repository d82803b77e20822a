package io.rebalance.mover;

import io.rebalance.core.config.ConfigLoader;
import io.rebalance.core.config.ConfigValidator;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.copy.RunStatus;
import io.rebalance.core.dynamo.DynamoClients;
import io.rebalance.core.redis.RedisConnector;
import io.rebalance.core.retry.Retrier;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * One migration under test: a generated room_events table, a DynamoDB table and a Redis prefix of its own, and
 * mover processes started in this JVM (each with its own Redis and DynamoDB clients, as separate processes would).
 */
final class MoverFixture implements AutoCloseable {
    static final Instant END = Instant.parse("2024-10-20T00:00:00Z");

    final SharedServices services = SharedServices.get();
    final String table = SharedServices.unique("room_events");
    final String prefix = SharedServices.unique("t") + ":";
    final Map<String, String> overrides = new HashMap<>();
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final ExecutorService threads = Executors.newCachedThreadPool();

    MoverFixture() {
        overrides.put("source.jdbcUrl", services.jdbcUrl);
        overrides.put("source.table", table);
        overrides.put("target.table", table);
        overrides.put("target.endpoint", services.dynamo.endpoint());
        overrides.put("redis.url", services.redisUrl);
        overrides.put("redis.prefix", prefix);
        overrides.put("mover.slotRetryDelay", "300ms");
        overrides.put("mover.keeperInterval", "300ms");
    }

    MoverFixture generate(long rows, int hours) throws Exception {
        try (Connection c = services.postgres()) {
            RoomEventsGenerator.create(c, table, rows, END, hours, 42);
        }
        return this;
    }

    MoverFixture set(String key, String value) {
        overrides.put(key, value);
        return this;
    }

    MigrationConfig config() {
        return ConfigValidator.validate(new ConfigLoader(Map.of()).load(null, overrides));
    }

    UnifiedJedis redis() {
        UnifiedJedis r = RedisConnector.connect(config().redis().url(), 16);
        closeables.add(r);
        return r;
    }

    DynamoDbClient dynamo(List<ExecutionInterceptor> interceptors) {
        DynamoDbClient d = DynamoClients.create(config().target(), services.dynamo.endpoint(), 32, interceptors);
        closeables.add(d);
        return d;
    }

    RunState runState() {
        MigrationConfig c = config();
        return new RunState(redis(), c.redis().keyspace().run(), Retrier.standard());
    }

    /** Preflight (creating the DynamoDB table) and a process ready to run. */
    MoverProcess process(PhaseHooks hooks, List<ExecutionInterceptor> interceptors) {
        MigrationConfig c = config();
        UnifiedJedis redis = redis();
        DynamoDbClient dynamo = dynamo(interceptors);
        RunState run = new RunState(redis, c.redis().keyspace().run(), Retrier.standard());
        var prepared = new RunPlanner(c).prepare(run, dynamo, services.dynamo.endpoint(), true);
        run.compareAndSet(RunStatus.NOT_STARTED, RunStatus.TO_START);
        MoverProcess p = new MoverProcess(c, prepared.table(), prepared.plan(), redis, dynamo, hooks);
        closeables.add(p);
        return p;
    }

    CompletableFuture<RunStatus> start(MoverProcess p) {
        return CompletableFuture.supplyAsync(
                () -> {
                    try {
                        return p.run();
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                },
                threads);
    }

    List<String> differences() throws Exception {
        try (Connection c = services.postgres();
                DynamoDbClient d = services.dynamoClient()) {
            return io.rebalance.testkit.RoomEventsComparison.differences(c, table, d, table);
        }
    }

    @Override
    public void close() throws Exception {
        for (AutoCloseable c : closeables) {
            if (c instanceof MoverProcess p) p.shutdown();
        }
        threads.shutdown();
        threads.awaitTermination(20, java.util.concurrent.TimeUnit.SECONDS);
        for (AutoCloseable c : closeables) {
            if (!(c instanceof MoverProcess)) c.close();
        }
    }
}
