package io.rebalance.protocol.shadow;

import io.rebalance.protocol.LuaScript;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.keyspace.ScopeKeys;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import redis.clients.jedis.UnifiedJedis;

/**
 * The record of a scope's shadow reads in Redis: counts by outcome per minute (a day of minutes kept) and in all,
 * and the latest {@value #KEPT} mismatches. Applications write it ({@code Router}, one script call per sampled read,
 * off their request path); {@code rebalance status}, {@code rebalance shadow} and the cutover's gate read it.
 */
public final class ShadowLog {
    /** Mismatches kept per scope, newest first, as GitHub's Scientist keeps its last 1,000. */
    public static final int KEPT = 1_000;
    /** Minutes of counts kept: a day, the longest window a gate or a page asks about. */
    public static final int MINUTES_KEPT = 24 * 60;

    private static final LuaScript RECORD = LuaScript.load(ShadowLog.class, "shadow-record.lua");

    private final UnifiedJedis redis;
    private final Keyspace keyspace;

    public ShadowLog(UnifiedJedis redis, Keyspace keyspace) {
        this.redis = redis;
        this.keyspace = keyspace;
    }

    /**
     * Counts {@code n} outcomes of {@code scope}; a mismatch's answers are kept too.
     *
     * @param mismatch the answers that differed, or null
     */
    public void record(String scope, ShadowOutcome outcome, ShadowMismatch mismatch, long n) {
        ScopeKeys k = keyspace.scope(scope);
        RECORD.eval(
                redis,
                List.of(k.shadowCounts(), k.shadowMismatches()),
                List.of(
                        outcome.wire(),
                        Long.toString(minute(System.currentTimeMillis())),
                        mismatch == null ? "" : mismatch.encode(),
                        Integer.toString(KEPT),
                        Integer.toString(MINUTES_KEPT),
                        Long.toString(n)));
    }

    /** The scope's outcomes counted over the last {@code window} (whole minutes, the current one included). */
    public Map<ShadowOutcome, Long> counts(String scope, Duration window) {
        Map<String, String> h = redis.hgetAll(keyspace.scope(scope).shadowCounts());
        long now = minute(System.currentTimeMillis());
        long from = now - Math.max(1, window.toMinutes()) + 1;
        Map<ShadowOutcome, Long> out = zero();
        for (Map.Entry<String, String> e : h.entrySet()) {
            int colon = e.getKey().indexOf(':');
            if (colon < 0 || e.getKey().startsWith("total:")) continue;
            long m = Long.parseLong(e.getKey().substring(0, colon));
            if (m < from || m > now) continue;
            ShadowOutcome o =
                    ShadowOutcome.valueOf(e.getKey().substring(colon + 1).toUpperCase(Locale.ROOT));
            out.merge(o, Long.parseLong(e.getValue()), Long::sum);
        }
        return out;
    }

    /** The scope's outcomes counted since the first shadow read Redis kept. */
    public Map<ShadowOutcome, Long> totals(String scope) {
        Map<ShadowOutcome, Long> out = zero();
        Map<String, String> h = redis.hgetAll(keyspace.scope(scope).shadowCounts());
        for (ShadowOutcome o : ShadowOutcome.values())
            out.put(o, Long.parseLong(h.getOrDefault("total:" + o.wire(), "0")));
        return out;
    }

    /** The scope's latest mismatches, newest first, at most {@code limit}. */
    public List<ShadowMismatch> mismatches(String scope, int limit) {
        List<ShadowMismatch> out = new ArrayList<>();
        if (limit <= 0) return out;
        for (String entry : redis.lrange(keyspace.scope(scope).shadowMismatches(), 0, limit - 1L))
            out.add(ShadowMismatch.decode(entry));
        return out;
    }

    private static Map<ShadowOutcome, Long> zero() {
        Map<ShadowOutcome, Long> out = new EnumMap<>(ShadowOutcome.class);
        for (ShadowOutcome o : ShadowOutcome.values()) out.put(o, 0L);
        return out;
    }

    private static long minute(long ms) {
        return ms / 60_000;
    }
}
