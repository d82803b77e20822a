package io.rebalance.ops.cutover;

import io.rebalance.cdc.TailProgress;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.source.PartRows;
import io.rebalance.core.source.SourceSession;
import io.rebalance.cutover.DrainProof;
import io.rebalance.cutover.WindowClosing;
import io.rebalance.ops.Connections;
import io.rebalance.protocol.handoff.Lsn;
import java.sql.Connection;
import java.time.Duration;
import java.util.Optional;

/**
 * What {@code cutover --close-window} needs of the stores: the forward tail caught up to a WAL position noted now, so
 * that every write which bypassed the Postgres fence before the command is recorded; and the verifier, comparing the
 * recorded keys row by row (made only when there are some, so a retired table is read only then).
 */
public final class WindowCloseChecks implements WindowClosing {
    private final MigrationConfig config;
    private final Connections c;

    public WindowCloseChecks(MigrationConfig config, Connections c) {
        this.config = config;
        this.c = c;
    }

    @Override
    public Optional<String> awaitTail() throws Exception {
        long now;
        try (Connection pg = new SourceSession(config.source()).openForPreflight()) {
            now = CutoverVerification.walNow(pg, "rebalance.close-window");
        }
        // a heartbeat moves the position on an idle table; the message above moves it at once
        Duration bound = config.tail().heartbeat().multipliedBy(2).plus(Duration.ofSeconds(5));
        TailProgress tail =
                new TailProgress(c.redis(), config.redis().keyspace().tail());
        if (tail.awaitApplied(now, bound)) return Optional.empty();
        return Optional.of(
                tail.applied().isEmpty()
                        ? "no `rebalance tail` runs"
                        : "the tail did not read the WAL up to " + Lsn.text(now) + " within " + bound.toSeconds()
                                + " s");
    }

    @Override
    public DrainProof proof() throws Exception {
        return new RollbackProof(
                config, c, c.sourceTableAsKept(), false, PartRows.ALL); // the keys named are the part's
    }
}
