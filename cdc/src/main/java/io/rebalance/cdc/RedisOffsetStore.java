package io.rebalance.cdc;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.redis.RedisConnector;
import io.rebalance.protocol.LuaScript;
import io.rebalance.protocol.lease.LeaseLost;
import io.rebalance.protocol.lease.LeaseReply;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.connect.runtime.WorkerConfig;
import org.apache.kafka.connect.storage.MemoryOffsetBackingStore;
import redis.clients.jedis.UnifiedJedis;

/**
 * Debezium's offsets (the replication position the stream resumes from) kept in a Redis hash, so that any process
 * can resume the tail. Debezium creates this class by name ({@code offset.storage}) and hands it the engine's
 * properties; the {@code rebalance.*} ones below say where to write. Every save is fenced by the tail lease: a
 * process that lost the lease cannot move the offsets under the one that holds it now.
 */
public final class RedisOffsetStore extends MemoryOffsetBackingStore {
    /** A handle of {@link EngineSecrets} for the Redis settings, which may hold a password. */
    static final String REDIS = "rebalance.redis.handle";

    static final String OFFSETS_KEY = "rebalance.offsets.key";
    static final String LEASE_KEY = "rebalance.lease.key";
    static final String OWNER = "rebalance.lease.owner";

    private static final LuaScript SAVE = LuaScript.load(RedisOffsetStore.class, "save-offsets.lua");

    private MigrationConfig.Redis settings;
    private String offsetsKey;
    private String leaseKey;
    private String owner;
    private UnifiedJedis redis;

    @Override
    public void configure(WorkerConfig config) {
        super.configure(config);
        Map<String, String> props = config.originalsStrings();
        this.settings = EngineSecrets.get(required(props, REDIS), MigrationConfig.Redis.class);
        this.offsetsKey = required(props, OFFSETS_KEY);
        this.leaseKey = required(props, LEASE_KEY);
        this.owner = required(props, OWNER);
    }

    @Override
    public synchronized void start() {
        super.start();
        redis = RedisConnector.connect(settings, 2);
        Map<ByteBuffer, ByteBuffer> loaded = new HashMap<>();
        redis.hgetAll(offsetsKey).forEach((k, v) -> loaded.put(decode(k), decode(v)));
        data.putAll(loaded);
    }

    @Override
    public synchronized void stop() {
        super.stop();
        if (redis != null) redis.close();
    }

    @Override
    protected void save() {
        List<String> args = new ArrayList<>();
        args.add(owner);
        data.forEach((k, v) -> {
            if (k == null || v == null) return;
            args.add(encode(k));
            args.add(encode(v));
        });
        LeaseReply r = LeaseReply.of(SAVE.eval(redis, List.of(leaseKey, offsetsKey), args));
        if (!r.granted()) {
            throw new LeaseLost(
                    r.member(), "offsets not saved: the tail lease is held by '" + r.member() + "', not " + owner);
        }
    }

    /** Only Kafka Connect's offset REST API asks this; the embedded engine never does. */
    @Override
    public Set<Map<String, Object>> connectorPartitions(String connectorName) {
        return Set.of();
    }

    private static String required(Map<String, String> props, String key) {
        String v = props.get(key);
        if (v == null || v.isEmpty()) throw new IllegalStateException("RedisOffsetStore needs the property " + key);
        return v;
    }

    private static String encode(ByteBuffer b) {
        ByteBuffer copy = b.duplicate();
        byte[] bytes = new byte[copy.remaining()];
        copy.get(bytes);
        return Base64.getEncoder().encodeToString(bytes);
    }

    private static ByteBuffer decode(String s) {
        return ByteBuffer.wrap(Base64.getDecoder().decode(s));
    }
}
