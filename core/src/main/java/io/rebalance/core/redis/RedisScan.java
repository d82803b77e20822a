package io.rebalance.core.redis;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import redis.clients.jedis.RedisClusterClient;
import redis.clients.jedis.ScanIteration;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

/** Every key under a prefix, by SCAN (never KEYS, which blocks a shared Redis), on every primary of a cluster. */
public final class RedisScan {
    private RedisScan() {}

    /** Every key starting with {@code prefix}; glob characters in it are escaped. */
    public static List<String> keys(UnifiedJedis redis, String prefix) {
        String match = prefix.replaceAll("([\\\\*?\\[\\]{}])", "\\\\$1") + "*";
        if (!(redis instanceof RedisClusterClient cluster)) {
            ScanIteration scan = redis.scanIteration(1000, match);
            List<String> keys = new ArrayList<>();
            while (!scan.isIterationCompleted()) keys.addAll(scan.nextBatchList());
            return keys;
        }
        Set<String> keys = new LinkedHashSet<>();
        ScanParams params = new ScanParams().match(match).count(1000);
        ClusterPrimaries.forEach(cluster, j -> {
            String cursor = ScanParams.SCAN_POINTER_START;
            do {
                ScanResult<String> r = j.scan(cursor, params);
                keys.addAll(r.getResult());
                cursor = r.getCursor();
            } while (!cursor.equals(ScanParams.SCAN_POINTER_START));
        });
        return new ArrayList<>(keys);
    }
}
