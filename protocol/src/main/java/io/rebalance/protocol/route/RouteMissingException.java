package io.rebalance.protocol.route;

/**
 * Redis has no routing entry for a scope, so nobody can say where its reads and writes go. Either no cutover was ever
 * prepared for it, or Redis lost its data (a restart without persistence, a failover, an eviction): then the fences
 * still know the route, and {@code rebalance cutover --recover} rebuilds it from them (ADR 8). Nothing is read or
 * written meanwhile; never guess a default.
 */
public final class RouteMissingException extends IllegalStateException {
    public RouteMissingException(String scope, String prefix) {
        super("scope '" + scope + "' has no routing entry in Redis under prefix '" + prefix + "'. If a cutover was"
                + " prepared for it, Redis lost its data: run `rebalance cutover --recover`, which rebuilds the route"
                + " from the fences (nothing is read or written until then); otherwise run `rebalance cutover"
                + " --prepare` first");
    }
}
