package io.rebalance.ops;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.redis.RedisFitness;
import io.rebalance.core.redis.ReplicaWait;
import io.rebalance.cutover.PreCheck;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import redis.clients.jedis.UnifiedJedis;

/**
 * The Redis the cutover commands need (docs/redis.md): one that keeps the route, the journal and the token counter
 * across a restart or a failover, and never evicts them. What keeps them differs by kind of Redis, and the check
 * accepts each: an append-only file; replicas that acknowledge writes to the route's node ({@code WAIT}, measured
 * here), since every route change waits for one; or a store durable by other means, which INFO cannot show and
 * {@code redis.durable: true} declares (MemoryDB). Without any of them the commands refuse unless the risk is accepted
 * with {@code --allow-redis-without-aof}; an evicting Redis is always refused. INFO only: managed services disable
 * CONFIG.
 */
public final class RedisChecks {
    public static final String ALLOW_FLAG = "--allow-redis-without-aof";
    private static final String ACCEPTED = "RISK ACCEPTED by " + ALLOW_FLAG + ": ";

    private RedisChecks() {}

    /**
     * @param settings the run's Redis settings ({@code redis.durable}, the keyspace)
     * @param scope the cutover's scope: the replica probe writes to its route's node
     */
    public static List<PreCheck> run(
            UnifiedJedis redis, MigrationConfig.Redis settings, String scope, boolean allowWithoutAof) {
        boolean durable = settings.durable();
        String probeKey = settings.keyspace().scope(scope).replicaProbe();
        RedisFitness f;
        try {
            f = RedisFitness.of(redis);
        } catch (RuntimeException e) {
            PreCheck unreadable = PreCheck.fail(
                    "redis", "INFO could not be read (" + e.getMessage() + "); the cutover needs it to check Redis");
            return List.of(unreadable);
        }
        PreCheck persistence = persistence(redis, f, allowWithoutAof, durable, probeKey);
        PreCheck eviction = f.evictionProblem()
                .map(p -> PreCheck.fail("redis eviction", p))
                .orElseGet(() -> PreCheck.pass("redis eviction", "maxmemory-policy noeviction"));
        return List.of(persistence, eviction);
    }

    private static PreCheck persistence(
            UnifiedJedis redis, RedisFitness f, boolean allowWithoutAof, boolean durable, String probeKey) {
        String name = "redis persistence";
        if (f.aof()) return PreCheck.pass(name, "append-only file on");
        if (durable) {
            return PreCheck.pass(
                    name,
                    "redis.durable: true: taken as said (a store that keeps every acknowledged write without an"
                            + " append-only file, such as MemoryDB; INFO cannot show it)");
        }
        Optional<Duration> acked;
        String probeFailed = "";
        try {
            acked = f.replicas() == 0 ? Optional.empty() : new ReplicaWait(redis).probe(probeKey);
        } catch (RuntimeException e) {
            acked = Optional.empty();
            probeFailed = " (the WAIT probe failed: " + e.getMessage() + ")";
        }
        if (acked.isPresent()) {
            return PreCheck.pass(
                    name,
                    "no append-only file, but " + f.replicas() + " replica(s) (connected_slaves) and one acknowledged"
                            + " a write to the route's node in " + acked.get().toMillis() + " ms (WAIT 1): every"
                            + " route change waits for a replica, so a failover to one keeps it (automatic failover"
                            + " must be on: docs/redis.md)");
        }
        String found = "Redis keeps no append-only file (aof_enabled:0) and "
                + (f.replicas() == 0
                        ? "has no replica (connected_slaves:0)"
                        : "no replica acknowledged a write within " + ReplicaWait.TIMEOUT.toSeconds() + " s (WAIT 1)"
                                + probeFailed)
                + ", so a restart or failover could lose the route";
        String ways = "turn on the append-only file (`CONFIG SET appendonly yes` and `appendonly yes` in redis.conf),"
                + " or run a replica with automatic failover (Sentinel, a cluster's replicas, ElastiCache Multi-AZ),"
                + " or set redis.durable: true for a store durable by other means (MemoryDB); docs/redis.md";
        if (allowWithoutAof) return PreCheck.pass(name, ACCEPTED + found);
        return PreCheck.fail(name, found + "; fix: " + ways + "; or pass " + ALLOW_FLAG + " to accept the risk");
    }

    /** Whether {@code check} passed only because {@link #ALLOW_FLAG} accepted its risk: to be shown as a warning. */
    public static boolean riskAccepted(PreCheck check) {
        return check.passed() && check.detail().startsWith(ACCEPTED);
    }

    /**
     * The warning {@code copy} and {@code tail} print on a Redis that a restart would empty, saying what that would
     * cost them; empty when it keeps an append-only file, has a replica to fail over to, or is declared durable (or
     * INFO cannot be read: the command's own calls will say so).
     */
    public static Optional<String> volatileWarning(UnifiedJedis redis, MigrationConfig.Redis settings, String what) {
        if (settings.durable()) return Optional.empty();
        try {
            RedisFitness f = RedisFitness.of(redis);
            return f.aof() || f.replicas() > 0
                    ? Optional.empty()
                    : Optional.of("warning: Redis keeps no append-only file (aof_enabled:0) and has no replica: if"
                            + " it restarts, " + what + ". `CONFIG SET appendonly yes`, a replica with automatic"
                            + " failover, or redis.durable: true for MemoryDB avoids it (docs/redis.md)");
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }
}
