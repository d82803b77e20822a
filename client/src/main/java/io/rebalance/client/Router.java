package io.rebalance.client;

import io.rebalance.core.route.Route;
import io.rebalance.core.route.RouteMissingException;
import io.rebalance.core.route.RoutingTable;
import io.rebalance.core.route.Target;
import redis.clients.jedis.UnifiedJedis;

/**
 * Where an application reads a scope from: the routing table's read target, looked up on every call (one Redis round
 * trip, no cache), so a read that starts after a write was acknowledged goes where that write went (ADR 7).
 */
public final class Router {
    private final RoutingTable routes;
    private final String prefix;

    public Router(UnifiedJedis redis, String prefix) {
        this.routes = new RoutingTable(redis, prefix);
        this.prefix = prefix;
    }

    /** @throws RouteMissingException when the scope has no routing entry (none was prepared, or Redis lost it) */
    public Route route(String scope) {
        return routes.get(scope).orElseThrow(() -> new RouteMissingException(scope, prefix));
    }

    public Target readTarget(String scope) {
        return route(scope).read();
    }
}
