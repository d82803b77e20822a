package io.rebalance.cdc;

import io.rebalance.core.copy.KeyRefresher;
import io.rebalance.core.source.SourceSession;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * Applies changed keys to DynamoDB: each key's item becomes its row as Postgres holds it now, or is deleted when the
 * row is gone (ADR 6). Only keys come from the change stream, never values, so no event can carry an older value,
 * a TOAST placeholder or a rounded number into an item; the item is what the backfill's codec makes of the row.
 *
 * <p>One call at a time (the stream's batches and reconciliation share this lock), so two writes of one key never
 * race: the later read is the later write. Within a call the keys are distinct and written by several threads.
 */
final class ChangeApplier implements AutoCloseable {
    private static final int BATCH = 25;

    private final SourceSession session;
    private final KeyRefresher refresher;
    private final TouchedKeys touched;
    private final TailLease lease;
    private final ExecutorService writers;
    private Connection connection;

    ChangeApplier(SourceSession session, KeyRefresher refresher, TouchedKeys touched, TailLease lease, int threads) {
        this.session = session;
        this.refresher = refresher;
        this.touched = touched;
        this.lease = lease;
        this.writers = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "tail-writer");
            t.setDaemon(true);
            return t;
        });
    }

    /** @return how many items were put or deleted */
    synchronized int apply(Collection<String> keys) throws Exception {
        if (keys.isEmpty()) return 0;
        lease.check();
        touched.beforeWrite(keys); // recorded before the write, so reconciliation cannot miss it
        KeyRefresher.Refresh refresh = read(keys);
        List<WriteRequest> requests = refresh.requests();
        List<Future<?>> pending = new ArrayList<>();
        for (int i = 0; i < requests.size(); i += BATCH) {
            List<WriteRequest> part = requests.subList(i, Math.min(requests.size(), i + BATCH));
            pending.add(writers.submit(() -> {
                refresher.write(part);
                return null;
            }));
        }
        for (Future<?> f : pending) f.get();
        return requests.size();
    }

    private KeyRefresher.Refresh read(Collection<String> keys) throws SQLException {
        try {
            if (connection == null || connection.isClosed()) connection = session.open();
            return refresher.read(connection, keys);
        } catch (SQLException e) {
            closeConnection(); // a restarted Postgres leaves a dead connection: the next call opens a new one
            throw e;
        }
    }

    private void closeConnection() {
        try {
            if (connection != null) connection.close();
        } catch (SQLException ignored) {
            // it is being discarded because it failed
        }
        connection = null;
    }

    @Override
    public synchronized void close() {
        writers.shutdownNow();
        closeConnection();
    }
}
