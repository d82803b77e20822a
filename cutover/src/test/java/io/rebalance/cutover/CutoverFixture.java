package io.rebalance.cutover;

import io.rebalance.cdc.Tail;
import io.rebalance.cdc.TailPreflight;
import io.rebalance.cdc.TailProgress;
import io.rebalance.client.GuardSettings;
import io.rebalance.client.WriteGuard;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.DynamoClients;
import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.dynamo.TargetTable;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.protocol.handoff.Lsn;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.testkit.SharedServices;
import io.rebalance.testkit.TestMigration;
import io.rebalance.verifier.Difference;
import io.rebalance.verifier.FrozenTarget;
import io.rebalance.verifier.Verifier;
import java.net.URI;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import org.awaitility.Awaitility;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/**
 * A prepared scope on real services, over the kit's {@link TestMigration}: a room_events table in Postgres and DynamoDB, its fences, its route, the target
 * table's stream, and a tail (forward and reverse stream) running on a thread of this JVM. Closing stops the tail and
 * drops the replication slot, publication and tables.
 */
final class CutoverFixture implements AutoCloseable {
    static final Duration LEASE = Duration.ofSeconds(2);

    private final TestMigration migration = new TestMigration("cut").set("tail.leaseTtl", "3s");
    final SharedServices services = migration.services;
    final String table = migration.table;
    final String prefix = migration.prefix;
    final String pgFence = migration.settings().get("cutover.pgFence");
    final String dynamoFence = migration.settings().get("cutover.dynamoFence");
    final DynamoDbClient dynamo = services.dynamoClient();
    final String redisUrl;
    final UnifiedJedis redis;
    final ExecutorService threads = Executors.newCachedThreadPool();
    final CutoverParts parts;
    Tail tail;
    Future<?> tailOutcome;

    CutoverFixture() throws Exception {
        this(SharedServices.get().redisUrl);
    }

    /** @param redisUrl a Redis of the test's own (one it restarts), or the shared one */
    CutoverFixture(String redisUrl) throws Exception {
        this(redisUrl, Duration.ofSeconds(10));
    }

    /** @param maxWriteBlock the commands' write-block budget */
    CutoverFixture(String redisUrl, Duration maxWriteBlock) throws Exception {
        this.redisUrl = redisUrl;
        this.redis = redisCheckedOnBorrow(redisUrl);
        migration.set("redis.url", redisUrl);
        try (Connection c = services.postgres();
                Statement st = c.createStatement()) {
            st.execute(String.format(RoomEventsGenerator.DDL, table));
        }
        MigrationConfig config = config();
        SourceTable source = sourceTable();
        TargetTable.create(dynamo, table, source.key(), SlotIndex.of(config.target()));
        parts = new CutoverParts(
                new CutoverSettings(table, table, table, maxWriteBlock, LEASE, List.of(), Duration.ofSeconds(30), 1),
                redis,
                new Keyspace(prefix),
                new SourceSession(config.source()),
                dynamo,
                pgFence,
                dynamoFence);
        parts.prepare();
    }

    /**
     * Like a new process's client, every borrowed connection works: a restarted Redis leaves the pool's connections
     * broken, and each would fail one call, which a test would have to tell from a real failure.
     */
    private static UnifiedJedis redisCheckedOnBorrow(String url) {
        GenericObjectPoolConfig<redis.clients.jedis.Connection> pool = new GenericObjectPoolConfig<>();
        pool.setMaxTotal(16);
        pool.setMaxIdle(16);
        pool.setTestOnBorrow(true);
        URI uri = URI.create(url);
        return RedisClient.builder()
                .hostAndPort(uri.getHost(), uri.getPort())
                .clientConfig(DefaultJedisClientConfig.builder()
                        .socketTimeoutMillis(5_000)
                        .build())
                .poolConfig(pool)
                .build();
    }

    /** Sets a key of the migration's configuration, for the tail started after (its heartbeat, say). */
    CutoverFixture set(String key, String value) {
        migration.set(key, value);
        return this;
    }

    MigrationConfig config() {
        return migration.config();
    }

    SourceTable sourceTable() throws Exception {
        try (Connection c = new SourceSession(config().source()).open()) {
            return SourceTable.inspect(c, config());
        }
    }

    /** Starts the tail and waits until it streams and its reverse stream reports. */
    void startTail() throws Exception {
        startTail(DynamoClients::streamsOf);
    }

    private Function<DynamoDbClient, DynamoDbStreamsClient> streamsOf = DynamoClients::streamsOf;

    /** @param streamsOf the reverse stream's DynamoDB Streams client (a test's that delays records) */
    void startTail(Function<DynamoDbClient, DynamoDbStreamsClient> streamsOf) throws Exception {
        this.streamsOf = streamsOf;
        tail = new Tail(config(), sourceTable(), dynamo, redis, "cutover-test-tail").streamsOf(streamsOf);
        tailOutcome = threads.submit(() -> {
            tail.run();
            return null;
        });
        awaitStreaming();
    }

    private void awaitStreaming() {
        Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> {
            try (Connection c = services.postgres()) {
                return TailPreflight.slot(c, table + "_slot").active();
            }
        });
        Awaitility.await()
                .atMost(Duration.ofSeconds(30))
                .until(() -> parts.reverse().notReady().isEmpty());
    }

    /**
     * After Redis came back empty: a tail that lost its lease with Redis stands by and takes the new lease on its own;
     * one that stopped is started again, with the same Streams client. Waits until it streams and its reverse stream
     * reports again.
     */
    void startTailIfStopped() throws Exception {
        if (tailOutcome.isDone()) {
            startTail(streamsOf);
            return;
        }
        awaitStreaming();
    }

    WriteGuard guard() {
        return new WriteGuard(
                redis,
                dynamo,
                new GuardSettings(prefix, Duration.ofSeconds(5), Duration.ofSeconds(20), pgFence, dynamoFence));
    }

    Cutover cutover(String owner) {
        return parts.cutover(owner);
    }

    /** The rollback's proof as the cli gives it: the verifier compares the logged keys row by row. */
    DrainProof proof() {
        return proof(false);
    }

    /** @param everyKey as {@code --verify-all}: an incomplete log is made up for by comparing every key */
    DrainProof proof(boolean everyKey) {
        return new DrainProof() {
            /** Made at first use, once, as the cli's is made once per rollback. */
            private Verifier v;
            /** The logged keys' items, read once: one proof serves one rollback's window, as the cli's does. */
            private FrozenTarget logged;

            private void make() throws Exception {
                if (v != null) return;
                v = new Verifier(config(), sourceTable(), dynamo, lsn -> {});
                logged = v.frozenTarget();
            }

            @Override
            public void readItems(Collection<String> keys) throws Exception {
                make();
                logged.read(keys, 4);
            }

            @Override
            public Collection<String> differing(Optional<Collection<String>> keys, Duration budget) throws Exception {
                make();
                try (Connection c = v.open()) {
                    List<Difference> found =
                            keys.isPresent() ? logged.compare(c, keys.get(), 4) : v.compareKeys(c, everyKey(c), 4);
                    return found.stream().map(Difference::id).toList();
                }
            }

            @Override
            public boolean comparesEveryKey() {
                return everyKey;
            }
        };
    }

    /** {@code --close-window}'s needs as the cli meets them: the tail caught up to a position noted now, the proof. */
    WindowClosing closing() {
        return new WindowClosing() {
            @Override
            public Optional<String> awaitTail() throws Exception {
                long now;
                try (Connection c = services.postgres();
                        Statement st = c.createStatement();
                        ResultSet rs = st.executeQuery(
                                "SELECT pg_logical_emit_message(false, 'rebalance.close-window', '')::text")) {
                    rs.next();
                    now = Lsn.parse(rs.getString(1));
                }
                boolean caughtUp =
                        new TailProgress(redis, new Keyspace(prefix).tail()).awaitApplied(now, Duration.ofSeconds(30));
                return caughtUp
                        ? Optional.empty()
                        : Optional.of("the tail did not read the WAL up to " + Lsn.text(now));
            }

            @Override
            public DrainProof proof() {
                return CutoverFixture.this.proof();
            }
        };
    }

    private Collection<String> everyKey(Connection c) throws Exception {
        Set<String> all = new TreeSet<>();
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT id::text FROM " + table)) {
            while (rs.next()) all.add(rs.getString(1));
        }
        dynamo.scanPaginator(b -> b.tableName(table).consistentRead(true))
                .items()
                .forEach(item -> all.add(item.get("id").s()));
        return all;
    }

    @Override
    public void close() throws Exception {
        if (tail != null) tail.close();
        threads.shutdown();
        threads.awaitTermination(30, TimeUnit.SECONDS);
        try (Connection c = services.postgres();
                Statement st = c.createStatement()) {
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> !TailPreflight.slot(c, table + "_slot")
                    .active());
            if (TailPreflight.slot(c, table + "_slot").exists()) {
                st.execute("SELECT pg_drop_replication_slot('" + table + "_slot')");
            }
            st.execute("DROP PUBLICATION IF EXISTS " + table + "_pub");
            st.execute("DROP TABLE IF EXISTS " + table);
            st.execute("DROP FUNCTION IF EXISTS " + pgFence + "_check() CASCADE"); // the fence's trigger
            st.execute("DROP TABLE IF EXISTS " + pgFence);
        }
        for (String t : new String[] {table, dynamoFence}) {
            try {
                dynamo.deleteTable(b -> b.tableName(t));
            } catch (RuntimeException ignored) {
                // never created
            }
        }
        dynamo.close();
        redis.close();
        migration.close();
    }
}
