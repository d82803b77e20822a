package io.rebalance.protocol.route;

import io.rebalance.protocol.LuaScript;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.keyspace.ScopeKeys;
import io.rebalance.protocol.lease.LeaseReply;
import io.rebalance.protocol.lock.LockLease;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import redis.clients.jedis.UnifiedJedis;

/**
 * The routing table in Redis: per scope, where to read and where to write, and the move's status. Applications read
 * it on every operation ({@code client/Router}); only a holder of the scope's exclusive lease changes it, in one
 * script that checks the lease ({@link #set}), so an entry is never half-switched and never switched by a cutover
 * whose lease lapsed.
 */
public final class RoutingTable {
    private static final LuaScript SET = LuaScript.load(RoutingTable.class, "route-set.lua");
    private static final LuaScript RESTORE = LuaScript.load(RoutingTable.class, "route-restore.lua");
    private static final LuaScript SHADOW = LuaScript.load(RoutingTable.class, "route-shadow.lua");

    private final UnifiedJedis redis;
    private final Keyspace keyspace;

    public RoutingTable(UnifiedJedis redis, Keyspace keyspace) {
        this.redis = redis;
        this.keyspace = keyspace;
    }

    /** @return the entry, or empty when the scope was never prepared for a cutover */
    public Optional<Route> get(String scope) {
        Map<String, String> h = redis.hgetAll(keyspace.scope(scope).route());
        return h.isEmpty() ? Optional.empty() : Optional.of(Route.of(scope, h));
    }

    /**
     * Creates the entry as {@code status} with {@code epoch} unless one exists (a fresh scope: SOURCE, epoch 1; one
     * whose fences have moved on: as they say, ADR 8); returns the entry as it now is.
     */
    public Route create(String scope, RouteStatus status, long epoch) {
        String key = keyspace.scope(scope).route();
        if (redis.hsetnx(key, "status", status.name()) == 1) {
            redis.hset(
                    key,
                    Map.of(
                            "read", status.read().wire(),
                            "write", status.write().wire(),
                            "epoch", Long.toString(epoch),
                            "token", "0",
                            "updated_ms", Long.toString(System.currentTimeMillis())));
        }
        redis.sadd(keyspace.routes(), scope);
        return get(scope).orElseThrow();
    }

    /**
     * Overwrites the entry with {@code status} and {@code epoch} if {@code exclusive} is still held: for recovery
     * only, when Redis lost the entry or holds one older than the fences (ADR 8).
     *
     * @return false when the lease is gone (nothing was written)
     */
    public boolean restore(LockLease exclusive, RouteStatus status, long epoch) {
        ScopeKeys k = exclusive.keys();
        LeaseReply r = LeaseReply.of(RESTORE.eval(
                redis,
                List.of(k.route(), k.exclusive()),
                List.of(
                        exclusive.member(),
                        Long.toString(exclusive.token()),
                        status.read().wire(),
                        status.write().wire(),
                        status.name(),
                        Long.toString(epoch))));
        if (!r.granted()) return false;
        redis.sadd(keyspace.routes(), k.scope());
        return true;
    }

    /**
     * Sets the fraction of the scope's reads that {@code Router} also reads from the other store and compares, while
     * applications run (they read it with the route); the entry is left as it is otherwise.
     *
     * @param sample 0 (none) to 1 (every read)
     * @return false when the scope has no entry (nothing was written)
     */
    public boolean setShadowSample(String scope, double sample) {
        if (!(sample >= 0 && sample <= 1))
            throw new IllegalArgumentException("a shadow sample is a fraction from 0 to 1, not " + sample);
        Object set = SHADOW.eval(
                redis, List.of(keyspace.scope(scope).route()), List.of(Route.SHADOW_SAMPLE, Double.toString(sample)));
        return set instanceof Long n && n == 1;
    }

    public Set<String> scopes() {
        return new TreeSet<>(redis.smembers(keyspace.routes()));
    }

    /** The outcome of {@link #set}: the new entry, or why nothing was written. */
    public sealed interface SetResult {}

    public record Changed(Route route) implements SetResult {}

    /** The caller's exclusive lease is gone; {@code holder} has it now ('' when nobody). */
    public record LeaseGone(String holder) implements SetResult {}

    /** The entry's status was not the one expected ('' when there is no entry). */
    public record StatusChanged(String actual) implements SetResult {}

    /**
     * Sets the scope to {@code to} (its read and write targets with it) if {@code exclusive} is still held and the
     * entry is in {@code from}. The epoch rises by one, and to at least {@code epoch} (the one the fences recorded
     * for this flip; 0 for none).
     */
    public SetResult set(LockLease exclusive, RouteStatus from, RouteStatus to, long epoch) {
        if (exclusive.mode() != LockLease.Mode.EXCLUSIVE) {
            throw new IllegalArgumentException("only the exclusive lease may change a route");
        }
        ScopeKeys k = exclusive.keys();
        LeaseReply r = LeaseReply.of(SET.eval(
                redis,
                List.of(k.route(), k.exclusive()),
                List.of(
                        exclusive.member(),
                        Long.toString(exclusive.token()),
                        to.read().wire(),
                        to.write().wire(),
                        to.name(),
                        from == null ? "" : from.name(),
                        Long.toString(epoch))));
        if (r.granted()) return new Changed(get(k.scope()).orElseThrow());
        String why = r.detailText();
        return why.startsWith("status:") ? new StatusChanged(why.substring(7)) : new LeaseGone(r.owner());
    }
}
