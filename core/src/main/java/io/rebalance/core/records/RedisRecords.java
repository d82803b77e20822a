package io.rebalance.core.records;

import java.util.Collection;
import java.util.Map;
import redis.clients.jedis.UnifiedJedis;

/** Records as one Redis hash: a field per record. */
public final class RedisRecords implements Records {
    private final UnifiedJedis redis;
    private final String key;

    public RedisRecords(UnifiedJedis redis, String key) {
        this.redis = redis;
        this.key = key;
    }

    @Override
    public void put(Map<String, String> fields) {
        if (!fields.isEmpty()) redis.hset(key, fields);
    }

    @Override
    public void remove(Collection<String> fields) {
        if (!fields.isEmpty()) redis.hdel(key, fields.toArray(String[]::new));
    }

    @Override
    public long count() {
        return redis.hlen(key);
    }

    @Override
    public Map<String, String> all() {
        return redis.hgetAll(key);
    }

    @Override
    public void clear() {
        redis.del(key);
    }
}
