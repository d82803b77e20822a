package io.rebalance.ops;

import io.rebalance.cdc.TailProgress;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.protocol.handoff.Lsn;
import io.rebalance.verifier.InFlight;
import java.time.Duration;

/** How {@code verify} and the cutover's verification wait for changes in flight at a fingerprint to land. */
public final class InFlightWait {
    private InFlightWait() {}

    /**
     * Suspects are re-checked once changes in flight at the fingerprint have landed: with a tail running, once it has
     * applied the fingerprint's WAL position (bounded: a tail far behind falls back to the settle wait as well);
     * without one, after {@code verify.settle}.
     */
    public static InFlight of(MigrationConfig config, Connections c) {
        InFlight settle = InFlight.settle(config.verify().settle());
        if (config.mover().coordinatedByPostgres()) return settle; // no tail runs beside a copy coordinated so
        TailProgress tail =
                new TailProgress(c.redis(), config.redis().keyspace().tail());
        Duration bound =
                config.tail().heartbeat().multipliedBy(2).plus(config.verify().settle());
        return lsn -> {
            if (!tail.awaitApplied(Lsn.parse(lsn), bound)) settle.awaitPast(lsn);
        };
    }
}
