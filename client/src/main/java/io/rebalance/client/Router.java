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

    /** @param prefix the run's {@code redis.prefix}, as the cutover's configuration names it */
    public Router(UnifiedJedis redis, String prefix) {
        this.keyspace = new Keyspace(prefix);
        this.routes = new RoutingTable(redis, keyspace);
    }

    /** @throws RouteMissingException when the scope has no routing entry (none was prepared, or Redis lost it) */
    public Route route(String scope) {
        return routes.get(scope).orElseThrow(() -> new RouteMissingException(scope, keyspace.prefix()));
    }

    public Target readTarget(String scope) {
        return route(scope).read();
    }
}
