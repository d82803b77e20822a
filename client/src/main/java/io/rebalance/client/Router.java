package io.rebalance.client;

import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.route.Route;
import io.rebalance.protocol.route.RouteMissingException;
import io.rebalance.protocol.route.RoutingTable;
import io.rebalance.protocol.route.Target;
import redis.clients.jedis.UnifiedJedis;

/**
 * Where an application reads a scope from: the routing table's read target, looked up on every call (one Redis round
 * trip, no cache), so a read that starts after a write was acknowledged goes where that write went (ADR 7).
 */
public final class Router {
    private final RoutingTable routes;
    private final Keyspace keyspace;
    private final GuardSettings settings;

    /** @param prefix the run's {@code redis.prefix}, as the cutover's configuration names it */
    public Router(UnifiedJedis redis, String prefix) {
        this(redis, GuardSettings.defaults(prefix));
    }

    /** A router that knows the parts of the tables moved part by part, as {@link GuardSettings#withParts} gives them. */
    public Router(UnifiedJedis redis, GuardSettings settings) {
        this.keyspace = new Keyspace(settings.prefix());
        this.routes = new RoutingTable(redis, keyspace);
        this.settings = settings;
    }

    /**
     * @throws RouteMissingException when the scope has no routing entry (none was prepared, or Redis lost it)
     * @throws IllegalArgumentException when the scope moves part by part: {@link #route(String, Object)} names the row
     */
    public Route route(String scope) {
        return route(scope, null);
    }

    /**
     * The route of the part holding {@code partKey}, for a table moved part by part; the scope's own otherwise.
     *
     * @param partKey the row's partition-key value (the first key column); null only for a scope that moves whole
     */
    public Route route(String table, Object partKey) {
        String scope = settings.scopeOf(table, partKey);
        return routes.get(scope).orElseThrow(() -> new RouteMissingException(scope, keyspace.prefix()));
    }

    public Target readTarget(String scope) {
        return route(scope).read();
    }

    public Target readTarget(String table, Object partKey) {
        return route(table, partKey).read();
    }
}
