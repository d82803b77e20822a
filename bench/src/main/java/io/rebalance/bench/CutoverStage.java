package io.rebalance.bench;

import static io.rebalance.bench.BenchSteps.check;
import static io.rebalance.bench.BenchSteps.until;

import io.rebalance.cdc.Tail;
import io.rebalance.cdc.TailPreflight;
import io.rebalance.core.config.ConfigLoader;
import io.rebalance.core.config.ConfigValidator;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.dynamo.TargetTable;
import io.rebalance.core.redis.RedisScan;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.ops.Connections;
import io.rebalance.sim.CutoverCycles;
import java.sql.Connection;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * What the cutover benchmarks stand on alike: their settings as a configuration and as the commands' flags, a Redis
 * prefix emptied, the source table made anew with its DynamoDB table, and the tail running in this JVM. Closing it
 * stops the tail and drops what it made in Postgres.
 */
final class CutoverStage implements AutoCloseable {
    /** Makes the benchmark's source table, on a database where it and its slot, publication and fences are gone. */
    interface SourceRows {
        void make(Statement st) throws Exception;
    }

    final MigrationConfig config;
    final List<String> flags;
    final SourceSession session;
    final SourceTable source;
    private final String table;
    private final Connections services;
    private final Tail tail;
    private final ExecutorService thread = Executors.newSingleThreadExecutor();
    private final Future<?> tailRun;

    /** The keys both benchmarks set: the table, its tail, its fences and the run's Redis prefix; add to them. */
    static Map<String, String> settings(String table, String prefix, String endpoint) {
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("source.table", table);
        settings.put("target.table", table);
        settings.put("target.endpoint", endpoint);
        settings.put("redis.prefix", prefix);
        settings.put("tail.slotName", table);
        settings.put("tail.publication", table);
        settings.put("cutover.pgFence", "public." + table + "_fence");
        settings.put("cutover.dynamoFence", table + "_fence");
        return settings;
    }

    /** Starts the stage: {@code settings} are those of {@link #settings} and the benchmark's own. */
    static CutoverStage start(Map<String, String> settings, SourceRows rows) throws Exception {
        MigrationConfig config = ConfigValidator.validate(new ConfigLoader(System.getenv()).load(null, settings));
        return new CutoverStage(config, BenchSteps.flags(settings), rows);
    }

    private CutoverStage(MigrationConfig config, List<String> flags, SourceRows rows) throws Exception {
        this.config = config;
        this.flags = flags;
        this.session = new SourceSession(config.source());
        this.table = config.source().table();
        this.services = new Connections(config, 64);
        try {
            UnifiedJedis redis = services.redis();
            for (String k : RedisScan.keys(redis, config.redis().prefix())) redis.del(k);
            try (Connection c = session.open();
                    Statement st = c.createStatement()) {
                dropPostgres(c, st);
                rows.make(st);
            }
            try (Connection c = session.open()) {
                this.source = SourceTable.inspect(c, config);
            }
            TargetTable.create(services.dynamo(), table, source.key(), SlotIndex.of(config.target()));
            this.tail = new Tail(config, source, services.dynamo(), redis, "bench-tail");
            this.tailRun = thread.submit(() -> {
                tail.run();
                return null;
            });
        } catch (Exception e) {
            thread.shutdownNow();
            services.close();
            throw e;
        }
    }

    UnifiedJedis redis() {
        return services.redis();
    }

    DynamoDbClient dynamo() {
        return services.dynamo();
    }

    /**
     * Once the tail streams: prepares the cutover, copies and verifies every slot, and waits until {@code dryRun}
     * (the benchmark's {@code cutover --dry-run}) would cut over.
     */
    void copied(CutoverCycles commands, List<String> dryRun) throws Exception {
        until(() -> {
            try (Connection c = session.open()) {
                return TailPreflight.slot(c, table).active();
            }
        });
        check(commands.command(List.of("cutover", "--prepare")));
        check(commands.command(List.of("copy", "--no-progress")));
        check(commands.command(List.of("verify", "--all")));
        until(() -> commands.command(dryRun).exitCode() == 0);
    }

    @Override
    public void close() throws Exception {
        try {
            tail.close();
            tailRun.get(60, TimeUnit.SECONDS);
            thread.shutdownNow();
            try (Connection c = session.open();
                    Statement st = c.createStatement()) {
                until(() -> !TailPreflight.slot(c, table).active());
                dropPostgres(c, st);
            }
        } finally {
            services.close();
        }
    }

    private void dropPostgres(Connection c, Statement st) throws Exception {
        if (TailPreflight.slot(c, table).exists()) st.execute("SELECT pg_drop_replication_slot('" + table + "')");
        st.execute("DROP PUBLICATION IF EXISTS " + table);
        st.execute("DROP TABLE IF EXISTS " + table);
        // the fences' triggers: a table moved whole has the first, one moved part by part both
        st.execute("DROP FUNCTION IF EXISTS public." + table + "_fence_part_check() CASCADE");
        st.execute("DROP FUNCTION IF EXISTS public." + table + "_fence_check() CASCADE");
        st.execute("DROP TABLE IF EXISTS public." + table + "_fence");
    }
}
