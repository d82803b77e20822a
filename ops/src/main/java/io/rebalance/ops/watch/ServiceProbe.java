package io.rebalance.ops.watch;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.source.SourceSession;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import redis.clients.jedis.UnifiedJedis;

/**
 * Whether Redis and Postgres answer, asked by a {@link Refresher} each and read by readiness: one small question each
 * (PING; a kept connection's validity), never a query on the migrated table. An answer older than {@code fresh}
 * counts as none: a service that hangs the question is down, not up as it last was.
 */
final class ServiceProbe implements AutoCloseable {
    private final UnifiedJedis redis;
    private final SourceSession source;
    private final long freshMs;
    private volatile Answer redisUp = new Answer(Health.Result.down("not asked yet"), Long.MAX_VALUE);
    private volatile Answer postgresUp = new Answer(Health.Result.down("not asked yet"), Long.MAX_VALUE);
    private Connection pg;

    /** An answer and when it came (epoch ms). */
    private record Answer(Health.Result result, long atMs) {}

    ServiceProbe(UnifiedJedis redis, MigrationConfig.Source source, Duration fresh) {
        this.redis = redis;
        this.source = new SourceSession(source);
        this.freshMs = fresh.toMillis();
    }

    void askRedis() {
        try {
            redis.ping();
            redisUp = new Answer(Health.Result.up("answers PING"), System.currentTimeMillis());
        } catch (RuntimeException e) {
            redisUp = new Answer(Health.Result.down("does not answer: " + e.getMessage()), System.currentTimeMillis());
        }
    }

    synchronized void askPostgres() {
        try {
            if (pg == null || !pg.isValid(2)) {
                closePg();
                pg = source.open();
            }
            postgresUp = new Answer(Health.Result.up("answers"), System.currentTimeMillis());
        } catch (SQLException | RuntimeException e) {
            closePg();
            postgresUp = new Answer(
                    Health.Result.down("does not answer: " + firstLine(e.getMessage())), System.currentTimeMillis());
        }
    }

    Health.Result redis() {
        return fresh(redisUp);
    }

    Health.Result postgres() {
        return fresh(postgresUp);
    }

    private Health.Result fresh(Answer a) {
        long age = System.currentTimeMillis() - a.atMs();
        if (a.atMs() == Long.MAX_VALUE || age <= freshMs) return a.result();
        return Health.Result.down("has not answered for " + age + " ms");
    }

    private static String firstLine(String s) {
        return s == null ? "" : s.lines().findFirst().orElse("");
    }

    private void closePg() {
        try {
            if (pg != null) pg.close();
        } catch (SQLException ignored) {
            // it is being replaced
        }
        pg = null;
    }

    @Override
    public synchronized void close() {
        closePg();
    }
}
