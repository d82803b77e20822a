package io.rebalance.testkit;

import java.util.ArrayList;
import java.util.List;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

/** Lists a run's keys, to check that compaction left few behind. */
public final class RedisKeys {
    private RedisKeys() {}

    public static List<String> withPrefix(UnifiedJedis redis, String prefix) {
        List<String> keys = new ArrayList<>();
        String cursor = ScanParams.SCAN_POINTER_START;
        ScanParams params =
                new ScanParams().match(prefix.replace("{", "\\{") + "*").count(1000);
        do {
            ScanResult<String> r = redis.scan(cursor, params);
            keys.addAll(r.getResult());
            cursor = r.getCursor();
        } while (!cursor.equals(ScanParams.SCAN_POINTER_START));
        return keys;
    }
}
