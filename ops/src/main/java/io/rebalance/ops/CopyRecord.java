package io.rebalance.ops;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.source.SourceSession;
import io.rebalance.mover.FinishedCopy;
import io.rebalance.mover.RunState;
import io.rebalance.protocol.fence.PostgresFence;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The finished copy's record on the Postgres fence (ADR 12): kept when a command sees the copy FINISHED with the fence
 * installed, given back to a Redis that lost the run's keys, cleared when the copy is forgotten on purpose.
 */
final class CopyRecord {
    private static final Logger log = LoggerFactory.getLogger(CopyRecord.class);

    private final MigrationConfig config;
    private final PostgresFence fence;
    private final String scope;

    CopyRecord(MigrationConfig config) {
        this.config = config;
        this.fence = new PostgresFence(config.cutover().pgFence());
        // a table moved part by part has one copy: its record is kept on the first part's row
        this.scope = config.cutover().partMap().scopes(config.cutover().scope()).get(0);
    }

    /**
     * Keeps the run's record on the fence when its copy is FINISHED; does nothing before the fence is installed. A
     * Postgres that fails here costs only the record (a warning): nothing relies on it until Redis loses the run.
     */
    void keep(RunState run) {
        Optional<FinishedCopy> finished = FinishedCopy.of(run);
        if (finished.isEmpty()) return;
        try (Connection pg = new SourceSession(config.source()).openForPreflight()) {
            fence.recordCopy(pg, scope, finished.get().toJson());
        } catch (SQLException e) {
            log.warn(
                    "the finished copy's record could not be kept on {} ({}): a Redis that loses the run will not get"
                            + " it back from there",
                    fence.table(),
                    e.getMessage());
        }
    }

    /**
     * Gives the kept record back when Redis has no run under the prefix (it lost it).
     *
     * @return whether it did
     */
    boolean restore(RunState run) throws SQLException {
        if (run.plan() != null) return false;
        Optional<String> kept;
        try (Connection pg = new SourceSession(config.source()).openForPreflight()) {
            kept = fence.copyRecord(pg, scope);
        }
        if (kept.isEmpty()) return false;
        boolean restored = FinishedCopy.fromJson(kept.get()).restore(run);
        if (restored) {
            log.warn(
                    "Redis had no run under {}: the finished copy was given back from the record on {}",
                    config.redis().keyspace().prefix(),
                    fence.table());
        }
        return restored;
    }

    /** The copy was forgotten on purpose ({@code reset}): no record may bring it back. */
    void clear() throws SQLException {
        try (Connection pg = new SourceSession(config.source()).openForPreflight()) {
            fence.recordCopy(pg, scope, null);
        }
    }
}
