package io.rebalance.testkit;

import io.rebalance.core.config.ConfigLoader;
import io.rebalance.core.config.ConfigValidator;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.redis.RedisConnector;
import io.rebalance.local.RoomEventsGenerator;
import io.rebalance.protocol.keyspace.Keyspace;
import java.sql.Connection;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import redis.clients.jedis.UnifiedJedis;

/**
 * The test kit every module's integration tests build on: one migration of its own over the shared services (a
 * unique table, Redis prefix, replication slot, publication and fence names) with the settings every test needs,
 * the configuration as the commands load it, and the clients it opened, closed with it. The module fixtures (the
 * mover's processes, the tail's threads, the cutover's parts) add what only they need on top.
 */
public final class TestMigration implements AutoCloseable {
    /** The hour the generated tables end at: their slots are the hours before it. */
    public static final Instant END = Instant.parse("2024-10-20T00:00:00Z");

    public final SharedServices services = SharedServices.get();
    public final String table;
    public final String prefix;
    private final Map<String, String> settings = new LinkedHashMap<>();
    private final List<AutoCloseable> opened = new ArrayList<>();

    /** @param kind a short word naming the tests' table ({@code room_events}, {@code tail}, ...) */
    public TestMigration(String kind) {
        this(kind, SharedServices.get().jdbcUrl);
    }

    /** A migration whose source table lives in the Postgres at {@code jdbcUrl} (a test's own cluster, say). */
    public TestMigration(String kind, String jdbcUrl) {
        this.table = SharedServices.unique(kind);
        this.prefix = SharedServices.unique("t") + ":";
        settings.putAll(settings(services, jdbcUrl, table, prefix));
    }

    /**
     * The settings every test migration runs with: the shared services, and a table, Redis prefix, replication
     * slot, publication and fences of its own.
     */
    public static Map<String, String> settings(SharedServices services, String jdbcUrl, String table, String prefix) {
        Map<String, String> s = new LinkedHashMap<>();
        s.put("source.jdbcUrl", jdbcUrl);
        s.put("source.table", table);
        s.put("target.table", table);
        s.put("target.endpoint", services.dynamo.endpoint());
        s.put("redis.url", services.redisUrl);
        s.put("redis.prefix", prefix);
        s.put("tail.slotName", table + "_slot");
        s.put("tail.publication", table + "_pub");
        s.put("cutover.pgFence", "public." + table + "_fence");
        s.put("cutover.dynamoFence", table + "_fence");
        return s;
    }

    public TestMigration set(String key, String value) {
        settings.put(key, value);
        return this;
    }

    /** Back to the default for {@code key}. */
    public TestMigration unset(String key) {
        settings.remove(key);
        return this;
    }

    /** The settings, as {@code --set key=value} would give them. */
    public Map<String, String> settings() {
        return Collections.unmodifiableMap(settings);
    }

    /** The settings as command-line flags. */
    public List<String> args() {
        return args(settings);
    }

    /** Settings as command-line flags: {@code --set key=value} each. */
    public static List<String> args(Map<String, String> settings) {
        List<String> args = new ArrayList<>();
        settings.forEach((k, v) -> {
            args.add("--set");
            args.add(k + "=" + v);
        });
        return args;
    }

    /** The configuration as the commands load it: defaults, then these settings, validated. */
    public MigrationConfig config() {
        return ConfigValidator.validate(new ConfigLoader(Map.of()).load(null, settings));
    }

    public Keyspace keyspace() {
        return config().redis().keyspace();
    }

    /** A Redis connection of its own, closed with the migration. */
    public UnifiedJedis redis() {
        UnifiedJedis r = RedisConnector.connect(settings.get("redis.url"), 16);
        opened.add(r);
        return r;
    }

    /** Creates the source table with {@code rows} room events over the {@code hours} hours before {@link #END}. */
    public TestMigration generate(long rows, int hours) throws Exception {
        try (Connection c = services.postgres()) {
            RoomEventsGenerator.create(c, table, rows, END, hours, 42);
        }
        return this;
    }

    /** Closes {@code c} with the migration. */
    public <T extends AutoCloseable> T closing(T c) {
        opened.add(c);
        return c;
    }

    @Override
    public void close() throws Exception {
        Exception first = null;
        for (AutoCloseable c : opened) {
            try {
                c.close();
            } catch (Exception e) {
                if (first == null) first = e;
            }
        }
        opened.clear();
        if (first != null) throw first;
    }
}
