package io.rebalance.ops;

import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.route.Route;
import io.rebalance.protocol.route.RoutingTable;
import io.rebalance.protocol.shadow.ShadowLog;
import io.rebalance.protocol.shadow.ShadowMismatch;
import io.rebalance.protocol.shadow.ShadowOutcome;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import redis.clients.jedis.UnifiedJedis;

/**
 * What applications' shadow reads ({@code Router.read}) found for a scope, as {@code rebalance status} and {@code
 * rebalance shadow} show it: the sample, the outcomes of the last hour and the match rate, and the latest mismatches
 * with both stores' answers; and the sample set while applications run.
 */
public final class ShadowReport {
    /** The window {@code status} and the page count over. */
    public static final Duration HOUR = Duration.ofHours(1);

    private final RoutingTable routes;
    private final ShadowLog log;

    public ShadowReport(UnifiedJedis redis, Keyspace keyspace) {
        this.routes = new RoutingTable(redis, keyspace);
        this.log = new ShadowLog(redis, keyspace);
    }

    /** The sample and the last hour's outcomes of a scope that has a routing entry, for {@code status}. */
    public Map<String, Object> summary(Route route) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("sample", route.shadowSample());
        Map<ShadowOutcome, Long> hour = log.counts(route.scope(), HOUR);
        Map<String, Object> counts = new LinkedHashMap<>();
        for (ShadowOutcome o : ShadowOutcome.values()) counts.put(o.wire(), hour.get(o));
        m.put("lastHour", counts);
        long compared = hour.get(ShadowOutcome.MATCH) + hour.get(ShadowOutcome.MISMATCH);
        // null when nothing was compared: a rate of nothing is no 100%
        m.put("matchRate", compared == 0 ? null : (double) hour.get(ShadowOutcome.MATCH) / compared);
        return m;
    }

    /**
     * The summary with the outcomes counted since the first kept and the latest {@code limit} mismatches.
     *
     * @throws RebalanceException {@link ErrorCode#ROUTE_MISSING} when the scope has no routing entry
     */
    public Map<String, Object> scope(String scope, int limit) {
        Route route = route(scope);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("scope", scope);
        m.putAll(summary(route));
        Map<String, Object> totals = new LinkedHashMap<>();
        log.totals(scope).forEach((o, n) -> totals.put(o.wire(), n));
        m.put("total", totals);
        List<Map<String, Object>> list = new ArrayList<>();
        for (ShadowMismatch x : log.mismatches(scope, limit)) {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("key", x.key());
            e.put("at", Instant.ofEpochMilli(x.atMs()).toString());
            e.put("postgres", x.postgres());
            e.put("dynamodb", x.dynamo());
            list.add(e);
        }
        m.put("mismatches", list);
        return m;
    }

    /**
     * Sets the fraction of the scopes' reads through {@code Router} that are also read from the other store.
     *
     * @throws RebalanceException {@link ErrorCode#CONFIG_INVALID} for a sample outside 0..1, {@link
     *     ErrorCode#ROUTE_MISSING} when the scope has no routing entry
     */
    public void setSample(List<String> scopes, double sample) {
        if (!(sample >= 0 && sample <= 1)) {
            throw new RebalanceException(
                    ErrorCode.CONFIG_INVALID,
                    "--sample " + sample + " is not a fraction from 0 to 1: give 0.1 to compare one read in ten, or 0"
                            + " to stop comparing. Nothing was changed.");
        }
        for (String scope : scopes) route(scope); // every one has an entry, or none is changed
        for (String scope : scopes) if (!routes.setShadowSample(scope, sample)) throw missing(scope);
    }

    private Route route(String scope) {
        return routes.get(scope).orElseThrow(() -> missing(scope));
    }

    private static RebalanceException missing(String scope) {
        return new RebalanceException(
                ErrorCode.ROUTE_MISSING,
                "scope " + scope + " has no routing entry, where applications read the shadow sample with the route:"
                        + " run `rebalance cutover --prepare` first. Nothing was changed.");
    }
}
