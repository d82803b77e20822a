package io.rebalance.cli;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.ops.CopyOnly;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;

/**
 * The commands whose state lives in Redis alone (the tail's lease, offsets and key logs; the cutover's
 * readers-writers locks, routing table and journal; the dashboard's history) refuse a configuration that coordinates
 * the copy through Postgres, before they connect to anything.
 */
final class RedisOnly {
    private RedisOnly() {}

    /** @throws RebalanceException CONFIG_INVALID naming the command, what it keeps in Redis and the way on */
    static void require(MigrationConfig config, String command, String keeps) {
        if (!config.mover().coordinatedByPostgres()) return;
        throw new RebalanceException(
                ErrorCode.CONFIG_INVALID,
                "rebalance " + command + " keeps " + keeps + " in Redis and runs only with mover.coordinator: redis;"
                        + " this configuration says mover.coordinator: postgres. " + CopyOnly.WAY_ON);
    }
}
