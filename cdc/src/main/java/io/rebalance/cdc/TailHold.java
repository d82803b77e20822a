package io.rebalance.cdc;

import io.rebalance.core.source.SourceSession;
import io.rebalance.protocol.fence.FenceState;
import io.rebalance.protocol.fence.PostgresFence;
import io.rebalance.protocol.handoff.ForwardHold;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.function.LongSupplier;

/**
 * The hold the forward tail obeys: the cutover's request in Redis, or, when Redis has none while the Postgres fence
 * admits only the reverse stream, the hold the fence implies ({@link ForwardHold#effective}, ADR 8). Read once per
 * batch and before every rewrite; thread-safe.
 */
public final class TailHold implements AutoCloseable {
    private final ForwardHold hold;
    private final SourceSession session;
    private final PostgresFence fence;
    private final String scope;
    private final LongSupplier appliedLsn;
    private Connection connection;

    TailHold(ForwardHold hold, SourceSession session, PostgresFence fence, String scope, LongSupplier appliedLsn) {
        this.hold = hold;
        this.session = session;
        this.fence = fence;
        this.scope = scope;
        this.appliedLsn = appliedLsn;
    }

    ForwardHold requests() {
        return hold;
    }

    /**
     * Redis' request first, then the fence: a fence that changes after the read of Redis is seen by the next batch,
     * and a batch in hand holds no change made after the fence changed, since changes are decoded once committed.
     */
    synchronized ForwardHold.State state() throws SQLException {
        ForwardHold.State redis = hold.state();
        try {
            if (connection == null || connection.isClosed()) connection = session.open();
            return ForwardHold.effective(redis, fence.find(connection, scope).orElse(null), appliedLsn.getAsLong());
        } catch (SQLException e) {
            close(); // a restarted Postgres leaves a dead connection: the next call opens a new one
            throw e;
        }
    }

    public long appliedLsn() {
        return appliedLsn.getAsLong();
    }

    /** With the fence as the caller read it (the reverse stream, under its share lock). */
    public ForwardHold.State state(FenceState pgFence) {
        return ForwardHold.effective(hold.state(), pgFence, appliedLsn.getAsLong());
    }

    @Override
    public synchronized void close() {
        if (connection == null) return;
        try {
            connection.close();
        } catch (SQLException ignored) {
            // gone already
        }
        connection = null;
    }
}
