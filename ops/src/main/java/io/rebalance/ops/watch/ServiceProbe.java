package io.rebalance.ops.watch;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.source.SourceSession;
import java.sql.Connection;
import java.sql.SQLException;
import redis.clients.jedis.UnifiedJedis;

/**
 * Whether Redis and Postgres answer, asked by the {@link Refresher} and read by readiness: one small question each
 * (PING; a kept connection's validity), never a query on the migrated table.
 */
final class ServiceProbe implements AutoCloseable {
    private final UnifiedJedis redis;
    private final SourceSession source;
    private volatile Health.Result redisUp = Health.Result.down("not asked yet");
    private volatile Health.Result postgresUp = Health.Result.down("not asked yet");
    private Connection pg;

    ServiceProbe(UnifiedJedis redis, MigrationConfig.Source source) {
        this.redis = redis;
        this.source = new SourceSession(source);
    }

    void askRedis() {
        try {
            redis.ping();
            redisUp = Health.Result.up("answers PING");
        } catch (RuntimeException e) {
            redisUp = Health.Result.down("does not answer: " + e.getMessage());
        }
    }

    synchronized void askPostgres() {
        try {
            if (pg == null || !pg.isValid(2)) {
                closePg();
                pg = source.open();
            }
            postgresUp = Health.Result.up("answers");
        } catch (SQLException | RuntimeException e) {
            closePg();
            postgresUp = Health.Result.down("does not answer: " + firstLine(e.getMessage()));
        }
    }

    Health.Result redis() {
        return redisUp;
    }

    Health.Result postgres() {
        return postgresUp;
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
