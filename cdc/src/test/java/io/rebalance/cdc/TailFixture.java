package io.rebalance.cdc;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.dynamo.TargetTable;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.testkit.SharedServices;
import io.rebalance.testkit.TestMigration;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.awaitility.Awaitility;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * A room_events source table with its own replication slot and publication, an empty DynamoDB table with the slot
 * index, and tails run on threads of this JVM. Closing drops the slot and publication, so no test leaves WAL pinned.
 */
final class TailFixture implements AutoCloseable {
    private final TestMigration migration;
    final SharedServices services = SharedServices.get();
    final String table;
    final String slotName;
    final String publication;
    final DynamoDbClient dynamo = services.dynamoClient();
    final UnifiedJedis redis = services.redis();
    final ExecutorService threads = Executors.newCachedThreadPool();
    final List<Tail> tails = new CopyOnWriteArrayList<>();

    final String jdbcUrl;

    TailFixture() throws Exception {
        this(SharedServices.get().jdbcUrl);
    }

    /** A fixture whose source table lives in the Postgres at {@code jdbcUrl} (a test's own cluster, say). */
    TailFixture(String jdbcUrl) throws Exception {
        this.jdbcUrl = jdbcUrl;
        this.migration = new TestMigration("tail", jdbcUrl).set("tail.leaseTtl", "3s");
        this.table = migration.table;
        this.slotName = migration.settings().get("tail.slotName");
        this.publication = migration.settings().get("tail.publication");
        try (Connection c = postgres();
                Statement st = c.createStatement()) {
            st.execute(String.format(RoomEventsGenerator.DDL, table));
        }
        MigrationConfig config = config();
        SourceTable source = sourceTable();
        TargetTable.create(dynamo, table, source.key(), SlotIndex.of(config.target()));
    }

    Connection postgres() throws java.sql.SQLException {
        return java.sql.DriverManager.getConnection(jdbcUrl, "postgres", "");
    }

    TailFixture set(String key, String value) {
        migration.set(key, value);
        return this;
    }

    TailFixture unset(String key) {
        migration.unset(key);
        return this;
    }

    String setting(String key) {
        return migration.settings().get(key);
    }

    MigrationConfig config() {
        return migration.config();
    }

    /** The source table as `rebalance tail` takes it: its key ranges kept, where it has them. */
    SourceTable sourceTable() throws Exception {
        try (Connection c = new SourceSession(config().source()).open()) {
            return SourceTable.inspect(c, config()).keepRanges(c);
        }
    }

    /** Starts a tail on a thread; @return it, and its run() outcome as a future. */
    Tail startTail(String owner, List<Future<?>> outcomes) throws Exception {
        return startTail(owner, outcomes, dynamo);
    }

    /** Starts a tail that writes through {@code client} (a proxied one, say). */
    Tail startTail(String owner, List<Future<?>> outcomes, DynamoDbClient client) throws Exception {
        Tail tail = new Tail(config(), sourceTable(), client, redis, owner);
        tails.add(tail);
        outcomes.add(threads.submit(() -> {
            tail.run();
            return null;
        }));
        return tail;
    }

    /** Waits until the slot exists and a tail reads it: changes committed from now on reach the stream. */
    void awaitStreaming() {
        Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> {
            try (Connection c = postgres()) {
                return TailPreflight.slot(c, slotName).active();
            }
        });
    }

    /** Waits until the item of {@code id} is (or is not) in DynamoDB: the stream is applied in order, so all before. */
    void awaitItem(String id, boolean present) {
        Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> item(id).isEmpty() != present);
    }

    Map<String, AttributeValue> item(String id) {
        return dynamo.getItem(b -> b.tableName(table)
                        .key(Map.of("id", AttributeValue.fromS(id)))
                        .consistentRead(true))
                .item();
    }

    void sql(String... statements) throws Exception {
        try (Connection c = postgres();
                Statement st = c.createStatement()) {
            for (String s : statements) st.execute(s);
        }
    }

    void insert(String id, String kind, String dataJson, int seq) throws Exception {
        try (Connection c = postgres()) {
            insert(c, id, kind, dataJson, seq);
        }
    }

    /** An insert of its own transaction on {@code c}: a test inserting thousands of rows opens one session, not one each. */
    void insert(Connection c, String id, String kind, String dataJson, int seq) throws Exception {
        try (PreparedStatement ps =
                c.prepareStatement("INSERT INTO " + table + " VALUES (?, gen_random_uuid(), ?, ?::jsonb, now(), ?)")) {
            ps.setString(1, id);
            ps.setString(2, kind);
            ps.setString(3, dataJson);
            ps.setInt(4, seq);
            ps.executeUpdate();
        }
    }

    @Override
    public void close() throws Exception {
        for (Tail t : tails) t.close();
        threads.shutdown();
        threads.awaitTermination(30, java.util.concurrent.TimeUnit.SECONDS);
        try (Connection c = postgres();
                Statement st = c.createStatement()) {
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> !TailPreflight.slot(c, slotName)
                    .active());
            if (TailPreflight.slot(c, slotName).exists()) {
                st.execute("SELECT pg_drop_replication_slot('" + slotName + "')");
            }
            st.execute("DROP PUBLICATION IF EXISTS " + publication);
            st.execute("DROP TABLE IF EXISTS " + table);
            st.execute("DROP TABLE IF EXISTS rebalance_ranges_" + table);
        }
        try {
            dynamo.deleteTable(b -> b.tableName(table));
        } catch (RuntimeException ignored) {
            // never created
        }
        dynamo.close();
        redis.close();
        migration.close();
    }
}
