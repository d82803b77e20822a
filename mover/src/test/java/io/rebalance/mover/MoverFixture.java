package io.rebalance.mover;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.copy.ItemWriter;
import io.rebalance.core.copy.RunStatus;
import io.rebalance.core.dynamo.BatchWriter;
import io.rebalance.core.dynamo.DynamoClients;
import io.rebalance.core.dynamo.WritePacer;
import io.rebalance.core.refused.RefusedRows;
import io.rebalance.core.retry.Retrier;
import io.rebalance.core.source.PageReader;
import io.rebalance.core.source.SourceTable;
import io.rebalance.testkit.SharedServices;
import io.rebalance.testkit.TestMigration;
import java.sql.Connection;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * One migration under test (the kit's {@link TestMigration}: a generated room_events table, a DynamoDB table and a
 * Redis prefix of its own), and mover processes started in this JVM, each with its own Redis and DynamoDB clients,
 * as separate processes would.
 */
final class MoverFixture implements AutoCloseable {
    static final Instant END = TestMigration.END;

    private final TestMigration migration = new TestMigration("room_events")
            .set("mover.slotRetryDelay", "300ms")
            .set("mover.keeperInterval", "300ms");
    final SharedServices services = migration.services;
    final String table = migration.table;
    final String prefix = migration.prefix;
    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final ExecutorService threads = Executors.newCachedThreadPool();

    private Coordinator coordinator;

    /** A migration coordinated through Redis. */
    MoverFixture() {}

    /**
     * @param kind {@code redis} or {@code postgres}: the latter in a coordinator schema of its own, dropped at close,
     *     and a Redis URL no server answers at, so nothing can reach Redis unnoticed
     */
    static MoverFixture coordinatedBy(String kind) {
        MoverFixture f = new MoverFixture();
        if (kind.equals("postgres")) {
            f.set("mover.coordinator", "postgres")
                    .set("coordinator.schema", SharedServices.unique("coord").replace('-', '_'))
                    .set("redis.url", "redis://127.0.0.1:1");
        }
        return f;
    }

    /** The coordinator the fixture's processes share (each process of a real fleet would open its own). */
    Coordinator coordinator() {
        if (coordinator == null) coordinator = Coordinators.open(config(), this::redis, 16);
        return coordinator;
    }

    MoverFixture generate(long rows, int hours) throws Exception {
        migration.generate(rows, hours);
        return this;
    }

    MoverFixture set(String key, String value) {
        migration.set(key, value);
        return this;
    }

    MigrationConfig config() {
        return migration.config();
    }

    UnifiedJedis redis() {
        return migration.redis();
    }

    DynamoDbClient dynamo(List<ExecutionInterceptor> interceptors) {
        DynamoDbClient d = DynamoClients.create(config().target(), services.dynamo.endpoint(), 32, interceptors);
        closeables.add(d);
        return d;
    }

    RunState runState() {
        return coordinator().run();
    }

    /** Preflight (creating the DynamoDB table) and a process ready to run. */
    MoverProcess process(PhaseHooks hooks, List<ExecutionInterceptor> interceptors) {
        MigrationConfig c = config();
        DynamoDbClient dynamo = dynamo(interceptors);
        Coordinator process = Coordinators.open(c, this::redis, 16); // its own, as a process of its own would
        closeables.add(process);
        RunState run = process.run();
        var prepared = new RunPlanner(c).prepare(run, dynamo, services.dynamo.endpoint(), true);
        run.compareAndSet(RunStatus.NOT_STARTED, RunStatus.TO_START);
        MoverProcess p = new MoverProcess(
                c, prepared.table(), prepared.plan(), process, new RefusedRows(process.refused()), dynamo, hooks);
        closeables.add(p);
        return p;
    }

    /** The copy's refresher (its codec, page reader and batch writer) over a client with {@code interceptors}. */
    ItemWriter refresher(List<ExecutionInterceptor> interceptors) {
        DynamoDbClient dynamo = dynamo(interceptors);
        SourceTable table = new RunPlanner(config())
                .prepare(coordinator().run(), dynamo, services.dynamo.endpoint(), true)
                .table();
        return new ItemWriter(
                new PageReader(table),
                table.codec(config().target()),
                new BatchWriter(dynamo, config().target().table(), 25, Retrier.standard(), WritePacer.NONE));
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
        if (coordinator != null) coordinator.close();
        if (config().mover().coordinatedByPostgres()) {
            try (Connection c = services.postgres();
                    java.sql.Statement st = c.createStatement()) {
                st.execute("DROP SCHEMA IF EXISTS " + config().coordinator().schema() + " CASCADE");
            }
        }
        migration.close();
    }
}
