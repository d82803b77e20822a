package io.rebalance.cdc;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.copy.CopyProgress;
import io.rebalance.core.copy.ItemWriter;
import io.rebalance.core.refused.RefusedRows;
import io.rebalance.core.retry.Retrier;
import io.rebalance.core.source.SchemaWatch;
import io.rebalance.core.source.SourceSession;
import io.rebalance.protocol.fence.PostgresFence;
import io.rebalance.protocol.keyspace.RunKeys;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The collaborators of one lease's forward stream, built here in one place and closed together: the touched keys,
 * the refused rows, the status, the scopes, the schema and partition watches, the hold, the applier (which writes
 * through the one {@link ItemWriter}), reconciliation and the repair queue. {@link ForwardStream} runs them.
 */
final class StreamParts implements AutoCloseable {
    final TouchedKeys touched;
    final RefusedRows refused;
    final TailStatus status;
    final TailScopes scopes;
    final SchemaWatch watch;
    final PartitionWatch partitions;
    final TailHold hold;
    final ChangeApplier applier;
    final Reconciler reconciler;
    final RepairQueue repairs;
    /** What {@link #close} closes, by name, in the order opened. */
    private final List<Map.Entry<String, AutoCloseable>> opened = new ArrayList<>();

    /** Builds every part for {@code tail}'s stream over {@code session}; what was built is closed if one fails. */
    StreamParts(Tail tail, SourceSession session) {
        MigrationConfig config = tail.config;
        var t = config.tail();
        var keys = tail.keys();
        try {
            RunKeys runKeys = config.redis().keyspace().run();
            touched = new TouchedKeys(
                    tail.redis, keys, new CopyProgress(tail.redis, runKeys), tail.table.keyspace(), runKeys.status());
            refused = new RefusedRows(tail.redis, config.redis().keyspace());
            status = new TailStatus(
                    tail.redis,
                    keys,
                    session,
                    t.slotName(),
                    t.retentionWarnMb(),
                    tail.stats(),
                    tail.lease.owner(),
                    refused);
            opened.add(Map.entry("TailStatus", status::close));
            scopes = new TailScopes(
                    config.cutover().scope(),
                    config.redis().keyspace().handoff(),
                    config.cutover().partMap(),
                    tail.table.key());
            watch = opened(new SchemaWatch(session, config, tail.table.schema()));
            partitions = opened(new PartitionWatch(
                    tail.table, session, tail.redis, keys, new ChangedSlots(tail.redis, keys, tail.table.keyspace())));
            hold = opened(new TailHold(
                    scopes,
                    tail.redis,
                    session,
                    new PostgresFence(config.cutover().pgFence()),
                    tail.stats()::appliedLsn));
            // one retry layer: a failed batch is sent again by the stream, its rows read anew (ChangeHandler.untilDone)
            ItemWriter writer = ItemWriter.of(tail.table, config.target(), tail.dynamo, Retrier.once());
            applier = opened(new ChangeApplier(
                    session,
                    writer,
                    touched,
                    tail.lease,
                    t.applyThreads(),
                    tail.stats().commitWaits::incrementAndGet,
                    hold,
                    scopes,
                    tail.redis,
                    refused,
                    tail.stats().stages));
            reconciler = new Reconciler(touched, applier, tail.stats());
            repairs = new RepairQueue(tail.redis, keys);
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    private <T extends AutoCloseable> T opened(T part) {
        opened.add(Map.entry(part.getClass().getSimpleName(), part));
        return part;
    }

    /** Closes the parts, the last opened first (the applier before the hold it answers through); none is skipped. */
    @Override
    public void close() {
        for (int i = opened.size() - 1; i >= 0; i--) {
            Map.Entry<String, AutoCloseable> part = opened.get(i);
            Tail.quietly("closing " + part.getKey(), part.getValue()::close);
        }
    }
}
