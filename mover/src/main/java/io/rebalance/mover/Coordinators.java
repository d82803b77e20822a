package io.rebalance.mover;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.coordinator.CoordinatorPool;
import io.rebalance.core.coordinator.CoordinatorSchema;
import io.rebalance.core.retry.Retrier;
import io.rebalance.mover.postgres.PostgresCoordinator;
import io.rebalance.mover.redis.RedisCoordinator;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.function.Supplier;
import redis.clients.jedis.UnifiedJedis;

/** Opens the coordinator {@code mover.coordinator} names. */
public final class Coordinators {
    private Coordinators() {}

    /**
     * @param redis asked only with {@code mover.coordinator: redis}: the Postgres coordinator needs no Redis
     * @param sessions the Postgres coordinator's connections at most
     * @throws RebalanceException SOURCE_UNREACHABLE when the coordinator's database cannot be reached or its tables
     *     made; CONFIG_INVALID when they were made by a newer release
     */
    public static Coordinator open(MigrationConfig config, Supplier<UnifiedJedis> redis, int sessions) {
        var m = config.mover();
        if (!m.coordinatedByPostgres()) {
            return new RedisCoordinator(
                    config.redis().keyspace(), redis.get(), Retrier.standard(), m.leaseTtl(), m.stateTtl());
        }
        CoordinatorPool pool = new CoordinatorPool(config, sessions);
        CoordinatorSchema schema = new CoordinatorSchema(config.coordinator().schema());
        String where = "schema " + schema.name() + " of Postgres at " + pool.where();
        try (Connection c = pool.open()) {
            schema.ensure(c);
        } catch (SQLException e) {
            pool.close();
            throw new RebalanceException(
                    ErrorCode.SOURCE_UNREACHABLE,
                    "the copy's coordinator, " + where + ", cannot be used ("
                            + (e.getMessage() == null
                                    ? e.toString()
                                    : e.getMessage().lines().findFirst().orElse(""))
                            + "); start Postgres or fix coordinator.jdbcUrl (empty: the source's), and give "
                            + config.source().user() + " CREATE on the database: the schema is made on first use",
                    e);
        } catch (RuntimeException e) {
            pool.close();
            throw e;
        }
        return new PostgresCoordinator(
                pool, schema, schema.name(), Retrier.standard(), m.leaseTtl(), where, pool::close);
    }
}
