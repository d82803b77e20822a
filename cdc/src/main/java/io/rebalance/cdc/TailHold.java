package io.rebalance.cdc;

import io.rebalance.core.source.SourceSession;
import io.rebalance.protocol.fence.FenceState;
import io.rebalance.protocol.fence.PostgresFence;
import io.rebalance.protocol.handoff.ForwardHold;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import redis.clients.jedis.UnifiedJedis;

/**
 * The holds the forward tail obeys, one per scope (the table's, or each part's: {@link TailScopes}): the cutover's
 * request in Redis, or, when Redis has none while the scope's Postgres fence admits only the reverse stream, the hold
 * the fence implies ({@link ForwardHold#effective}, ADR 8). Read once per batch and before every rewrite, every scope
 * in one round trip to each store; thread-safe.
 */
public final class TailHold implements AutoCloseable {
    private final TailScopes scopes;
    private final UnifiedJedis redis;
    private final SourceSession session;
    private final PostgresFence fence;
    private final LongSupplier appliedLsn;
    private Connection connection;

    TailHold(
            TailScopes scopes,
            UnifiedJedis redis,
            SourceSession session,
            PostgresFence fence,
            LongSupplier appliedLsn) {
        this.scopes = scopes;
        this.redis = redis;
        this.session = session;
        this.fence = fence;
        this.appliedLsn = appliedLsn;
    }

    /** The cutover's requests to hold scope {@code scope}, which the tail acknowledges. */
    ForwardHold requests(int scope) {
        return new ForwardHold(redis, scopes.keys(scope));
    }

    /**
     * Redis' requests first, then the fences: a fence that changes after the read of Redis is seen by the next batch,
     * and a batch in hand holds no change made after the fence changed, since changes are decoded once committed.
     */
    synchronized Holds state() throws SQLException {
        List<ForwardHold.State> requested = ForwardHold.states(redis, scopes.keys());
        try {
            if (connection == null || connection.isClosed()) connection = session.open();
            Map<String, FenceState> fences = fence.findAll(connection, scopes.names());
            List<ForwardHold.State> out = new ArrayList<>(scopes.size());
            for (int i = 0; i < scopes.size(); i++) {
                FenceState f = fences.get(scopes.names().get(i));
                out.add(ForwardHold.effective(requested.get(i), f, appliedLsn.getAsLong()));
            }
            return new Holds(scopes, out);
        } catch (SQLException e) {
            close(); // a restarted Postgres leaves a dead connection: the next call opens a new one
            throw e;
        }
    }

    public long appliedLsn() {
        return appliedLsn.getAsLong();
    }

    /** A scope's hold, with its fence as the caller read it (the reverse stream, under its share lock). */
    public ForwardHold.State state(int scope, FenceState pgFence) {
        return ForwardHold.effective(requests(scope).state(), pgFence, appliedLsn.getAsLong());
    }

    public TailScopes scopes() {
        return scopes;
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
