package io.rebalance.ops;

import io.rebalance.core.redis.RedisFitness;
import io.rebalance.cutover.PreCheck;
import java.util.List;
import java.util.Optional;
import redis.clients.jedis.UnifiedJedis;

/**
 * The Redis the cutover commands need (docs/redis.md): one that keeps the route, the journal and the token counter
 * across a restart (an append-only file) and never evicts them. Without an append-only file the commands refuse
 * unless the risk is accepted with {@code --allow-redis-without-aof}; an evicting Redis is always refused.
 */
public final class RedisChecks {
    public static final String ALLOW_FLAG = "--allow-redis-without-aof";
    private static final String ACCEPTED = "RISK ACCEPTED by " + ALLOW_FLAG + ": ";

    private RedisChecks() {}

    public static List<PreCheck> run(UnifiedJedis redis, boolean allowWithoutAof) {
        RedisFitness f;
        try {
            f = RedisFitness.of(redis);
        } catch (RuntimeException e) {
            PreCheck unreadable = PreCheck.fail(
                    "redis", "INFO could not be read (" + e.getMessage() + "); the cutover needs it to check Redis");
            return List.of(unreadable);
        }
        PreCheck persistence = f.persistenceProblem()
                .map(p -> allowWithoutAof
                        ? PreCheck.pass("redis persistence", ACCEPTED + p)
                        : PreCheck.fail("redis persistence", p + "; or pass " + ALLOW_FLAG + " to accept the risk"))
                .orElseGet(() -> PreCheck.pass("redis persistence", "append-only file on"));
        PreCheck eviction = f.evictionProblem()
                .map(p -> PreCheck.fail("redis eviction", p))
                .orElseGet(() -> PreCheck.pass("redis eviction", "maxmemory-policy noeviction"));
        return List.of(persistence, eviction);
    }

    /** Whether {@code check} passed only because {@link #ALLOW_FLAG} accepted its risk: to be shown as a warning. */
    public static boolean riskAccepted(PreCheck check) {
        return check.passed() && check.detail().startsWith(ACCEPTED);
    }

    /**
     * The warning {@code copy} and {@code tail} print on a Redis without an append-only file, saying what a restart
     * would cost them; empty when it has one (or INFO cannot be read: the command's own calls will say so).
     */
    public static Optional<String> volatileWarning(UnifiedJedis redis, String what) {
        try {
            return RedisFitness.of(redis).aof()
                    ? Optional.empty()
                    : Optional.of("warning: Redis keeps no append-only file (aof_enabled:0): if it restarts, " + what
                            + ". `CONFIG SET appendonly yes` avoids it (docs/redis.md)");
        } catch (RuntimeException e) {
            return Optional.empty();
        }
    }
}
