package io.rebalance.cli;

import io.rebalance.core.redis.RedisFitness;
import io.rebalance.cutover.PreCheck;
import java.io.PrintWriter;
import java.util.List;
import java.util.Optional;
import redis.clients.jedis.UnifiedJedis;

/**
 * The Redis the cutover commands need (docs/redis.md): one that keeps the route, the journal and the token counter
 * across a restart (an append-only file) and never evicts them. Without an append-only file the commands refuse
 * unless the risk is accepted with {@code --allow-redis-without-aof}; an evicting Redis is always refused.
 */
final class RedisChecks {
    static final String ALLOW_FLAG = "--allow-redis-without-aof";
    private static final String ACCEPTED = "RISK ACCEPTED by " + ALLOW_FLAG + ": ";

    private RedisChecks() {}

    static List<PreCheck> run(UnifiedJedis redis, boolean allowWithoutAof) {
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

    /**
     * For {@code --prepare} and {@code --rollback}, which have no pre-check list of their own: prints the failed
     * checks and returns false when the command must refuse; prints the accepted risk as a warning otherwise.
     */
    static boolean admit(UnifiedJedis redis, boolean allowWithoutAof, PrintWriter err) {
        List<PreCheck> checks = run(redis, allowWithoutAof);
        checks.stream().filter(p -> !p.passed()).forEach(err::println);
        checks.stream()
                .filter(p -> p.detail().startsWith(ACCEPTED))
                .forEach(p -> err.println("warning: " + p.detail()));
        return checks.stream().allMatch(PreCheck::passed);
    }

    /**
     * The warning {@code copy} and {@code tail} print on a Redis without an append-only file, saying what a restart
     * would cost them; empty when it has one (or INFO cannot be read: the command's own calls will say so).
     */
    static Optional<String> volatileWarning(UnifiedJedis redis, String what) {
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
