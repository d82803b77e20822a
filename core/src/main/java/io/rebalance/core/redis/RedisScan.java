package io.rebalance.core.redis;

import java.util.ArrayList;
import java.util.List;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

/** Every key under a prefix, by SCAN (never KEYS, which blocks a shared Redis). */
public final class RedisScan {
    private RedisScan() {}

    /** Every key starting with {@code prefix}; braces in it are escaped (they are glob characters to SCAN). */
    public static List<String> keys(UnifiedJedis redis, String prefix) {
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
