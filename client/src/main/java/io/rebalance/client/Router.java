package io.rebalance.client;

import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.route.Route;
import io.rebalance.protocol.route.RouteMissingException;
import io.rebalance.protocol.route.RoutingTable;
import io.rebalance.protocol.route.Target;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import redis.clients.jedis.UnifiedJedis;

/**
 * Where an application reads a scope from: the routing table's read target, looked up on every call (one Redis round
 * trip, no cache), so a read that starts after a write was acknowledged goes where that write went (ADR 7).
 */
public final class Router {
    private final RoutingTable routes;
    private final Keyspace keyspace;
    private final GuardSettings settings;
    /** Where sampled reads are compared; null: no read is, whatever the routing entry's sample says. */
    private final ShadowReads shadows;

    /** @param prefix the run's {@code redis.prefix}, as the cutover's configuration names it */
    public Router(UnifiedJedis redis, String prefix) {
        this(redis, GuardSettings.defaults(prefix));
    }

    /** A router that knows the parts of the tables moved part by part, as {@link GuardSettings#withParts} gives them. */
    public Router(UnifiedJedis redis, GuardSettings settings) {
        this(redis, settings, null);
    }

    /**
     * A router that compares a sample of the reads made through {@link #read} with the other store's ({@code
     * rebalance shadow --sample} sets the fraction per scope, 0 until then).
     */
    public Router(UnifiedJedis redis, GuardSettings settings, ShadowReads shadows) {
        this.keyspace = new Keyspace(settings.prefix());
        this.routes = new RoutingTable(redis, keyspace);
        this.settings = settings;
        this.shadows = shadows;
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

    /**
     * Reads a row from the store the route names, by calling the application's read of that store, and returns its
     * answer. For the fraction of reads the routing entry's shadow sample gives, the other store's read is run too, on
     * another thread after this returns, and the two answers are compared by their {@code form} ({@link ShadowReads}):
     * the application's latency and errors never depend on it. At a sample of 0 nothing more happens than the route's
     * lookup (the sample comes with the route, in the same call) and the one read.
     *
     * @param table the scope, or the table of a scope moved part by part
     * @param partKey the row's partition-key value for a table moved part by part; null otherwise
     * @param key the key read, as a mismatch names it
     * @param postgres the application's read of the row from Postgres, answering null when there is no row
     * @param dynamo the application's read of the same row from DynamoDB, answering null when there is no item
     * @param form the text an answer is compared by (equal texts match); {@code CanonicalReads} in
     *     rebalance-verifier gives the verifier's canonical encoding of items
     */
    public <T> T read(
            String table,
            Object partKey,
            String key,
            Callable<T> postgres,
            Callable<T> dynamo,
            Function<? super T, String> form)
            throws Exception {
        Route route = route(table, partKey);
        T answer = (route.read() == Target.DYNAMODB ? dynamo : postgres).call();
        double sample = route.shadowSample();
        if (shadows != null && sample > 0 && ThreadLocalRandom.current().nextDouble() < sample)
            shadows.compare(
                    new ShadowReads.Sampled<>(route.scope(), key, route.read(), answer, postgres, dynamo, form));
        return answer;
    }

    public Target readTarget(String scope) {
        return route(scope).read();
    }

    public Target readTarget(String table, Object partKey) {
        return route(table, partKey).read();
    }
}
