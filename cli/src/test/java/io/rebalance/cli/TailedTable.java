package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.cdc.Tail;
import io.rebalance.cdc.TailPreflight;
import io.rebalance.core.codec.RowCodec;
import io.rebalance.core.codec.SourceRow;
import io.rebalance.core.config.ConfigLoader;
import io.rebalance.core.config.ConfigValidator;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.dynamo.TargetTable;
import io.rebalance.core.redis.RedisConnector;
import io.rebalance.core.source.PageReader;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.testkit.SharedServices;
import io.rebalance.testkit.TestMigration;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;

/**
 * A {@code room_events} table over 4 hours, its DynamoDB table, and a tail streaming it in this JVM: what the cutover
 * ITs need before they copy and cut over. Closing stops the tail first (as Ctrl-C does), then the clients, then drops
 * what {@link CutoverTables} drops.
 */
final class TailedTable implements AutoCloseable {
    final MigrationConfig config;
    final SourceTable source;
    final UnifiedJedis redis;
    final DynamoDbClient dynamo;
    private final SharedServices services;
    private final String table;
    private final ExecutorService thread = Executors.newSingleThreadExecutor();
    private final Tail tail;
    private final Future<?> running;

    /**
     * What the cutover ITs run with: the kit's settings ({@link TestMigration#settings}), with the table's own name
     * for its slot and publication, which {@link CutoverTables} drops.
     */
    static Map<String, String> settings(SharedServices services, String table, String prefix) {
        Map<String, String> s = TestMigration.settings(services, services.jdbcUrl, table, prefix);
        s.put("tail.slotName", table);
        s.put("tail.publication", table);
        return s;
    }

    /** The settings as command-line flags. */
    static List<String> args(Map<String, String> settings) {
        return TestMigration.args(settings);
    }

    /** What makes the source table before the tail starts. */
    interface Maker {
        void make(Connection pg) throws Exception;
    }

    TailedTable(SharedServices services, String table, Map<String, String> settings, int rows, long seed)
            throws Exception {
        this(
                services,
                table,
                settings,
                pg -> RoomEventsGenerator.create(pg, table, rows, Instant.parse("2024-10-20T04:00:00Z"), 4, seed));
    }

    TailedTable(SharedServices services, String table, Map<String, String> settings, Maker maker) throws Exception {
        this.services = services;
        this.table = table;
        try (Connection pg = services.postgres()) {
            maker.make(pg);
        }
        this.config = ConfigValidator.validate(new ConfigLoader(Map.of()).load(null, settings));
        try (Connection pg = services.postgres()) {
            this.source = SourceTable.inspect(pg, config).keepRanges(pg); // as `rebalance tail` keeps them
        }
        this.redis = RedisConnector.connect(config.redis(), 16);
        this.dynamo = SharedServices.dynamoClient(settings.get("target.endpoint"));
        TargetTable.create(dynamo, table, source.key(), SlotIndex.of(config.target()));
        this.tail = new Tail(config, source, dynamo, redis, table + "-tail");
        this.running = thread.submit(() -> {
            tail.run();
            return null;
        });
        try {
            Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> {
                try (Connection pg = services.postgres()) {
                    return TailPreflight.slot(pg, table).active();
                }
            });
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** What an application's {@code WriteGuard} on this table is built with (the run's prefix and fences). */
    io.rebalance.client.GuardSettings guard() {
        return new io.rebalance.client.GuardSettings(
                config.redis().keyspace().prefix(),
                Duration.ofSeconds(5),
                Duration.ofSeconds(30),
                config.cutover().pgFence(),
                config.cutover().dynamoFence());
    }

    /** Every item of the DynamoDB table by its key text, read consistently. */
    Map<String, Map<String, AttributeValue>> items() {
        Map<String, Map<String, AttributeValue>> out = new HashMap<>();
        Map<String, AttributeValue> start = null;
        do {
            Map<String, AttributeValue> from = start;
            ScanResponse r =
                    dynamo.scan(b -> b.tableName(table).consistentRead(true).exclusiveStartKey(from));
            for (Map<String, AttributeValue> item : r.items())
                out.put(source.key().textOf(item), item);
            start = r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty() ? r.lastEvaluatedKey() : null;
        } while (start != null);
        return out;
    }

    /**
     * Row by row: every Postgres row is the item the codec makes of it (its slot included), read in the session the
     * copy reads in, and DynamoDB holds no other item.
     */
    void assertEqualStores() throws Exception {
        Map<String, Map<String, AttributeValue>> items = items();
        RowCodec codec = source.codec(config.target());
        List<String> keys = new ArrayList<>();
        try (Connection pg = services.postgres();
                Statement st = pg.createStatement();
                ResultSet rs = st.executeQuery("SELECT " + source.key().selectText("") + " FROM " + table)) {
            while (rs.next()) keys.add(rs.getString(1));
        }
        try (Connection pg = new SourceSession(config.source()).open()) {
            List<SourceRow> rows = new PageReader(source).byKeys(pg, keys);
            assertThat(rows).hasSize(keys.size());
            for (SourceRow row : rows)
                assertThat(items.get(row.key())).as(row.key()).isEqualTo(codec.encode(row));
        }
        assertThat(items.keySet()).containsExactlyInAnyOrderElementsOf(keys);
    }

    /** Stops the tail as Ctrl-C does, and waits until its slot is free. */
    void stopTail() throws Exception {
        tail.close();
        running.get(60, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws Exception {
        try {
            stopTail();
        } finally {
            thread.shutdownNow();
            redis.close();
            dynamo.close();
            CutoverTables.drop(services, table);
        }
    }
}
