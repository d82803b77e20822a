package io.rebalance.cdc.reverse;

import io.rebalance.cdc.TailHold;
import io.rebalance.cdc.TailLease;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.protocol.fence.PostgresFence;
import io.rebalance.protocol.keyspace.HandoffKeys;
import io.rebalance.protocol.lease.LeaseLost;
import io.rebalance.protocol.route.RoutingTable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/** The reverse stream's loop in the tail's process: rounds one after another, a failed one reported and retried. */
public final class ReverseLoop {
    private static final Logger log = LoggerFactory.getLogger(ReverseLoop.class);

    private final MigrationConfig config;
    private final SourceTable table;
    private final DynamoDbClient dynamo;
    private final UnifiedJedis redis;
    private final TailLease lease;
    private final Function<DynamoDbClient, DynamoDbStreamsClient> streamsOf;

    public ReverseLoop(
            MigrationConfig config,
            SourceTable table,
            DynamoDbClient dynamo,
            UnifiedJedis redis,
            TailLease lease,
            Function<DynamoDbClient, DynamoDbStreamsClient> streamsOf) {
        this.config = config;
        this.table = table;
        this.dynamo = dynamo;
        this.redis = redis;
        this.lease = lease;
        this.streamsOf = streamsOf;
    }

    /**
     * Runs the reverse stream (ADR 7) beside the forward one, under the same lease: it writes Postgres only while a
     * cutover has made DynamoDB the store of record, and otherwise reads along, so its positions stay current.
     */
    public void run(TailHold hold, BooleanSupplier going, CountDownLatch stopped) {
        HandoffKeys handoff = config.redis().keyspace().handoff();
        try (DynamoDbStreamsClient streams = streamsOf.apply(dynamo);
                ReverseApplier applier = new ReverseApplier(
                        new SourceSession(config.source()),
                        dynamo,
                        config.target().table(),
                        table.decoder(config.target()),
                        new RowWriteBack(table),
                        new SlotMend(table, config.target(), dynamo),
                        new PostgresFence(config.cutover().pgFence()),
                        hold.scopes(),
                        hold,
                        lease)) {
            ReverseStream reverse = new ReverseStream(
                    dynamo,
                    streams,
                    config.target().table(),
                    redis,
                    handoff,
                    new RoutingTable(redis, config.redis().keyspace()),
                    hold.scopes().names(),
                    applier);
            while (going.getAsBoolean() && !Thread.currentThread().isInterrupted()) {
                long wait;
                try {
                    wait = reverse.round() > 0 ? 0 : reverse.idleWaitMs();
                } catch (LeaseLost e) {
                    return;
                } catch (Exception e) {
                    // a round cut short because the stream is stopping (lease lost, tail ending) is no failure to
                    // report
                    if (!going.getAsBoolean() || Thread.currentThread().isInterrupted()) return;
                    reverse.reset();
                    log.warn("the reverse stream's round failed, retrying in 1 s: {}", e.toString());
                    // Redis may be the one away: reporting must not end the stream
                    try {
                        reverse.failed(e);
                    } catch (RuntimeException reportFailed) {
                        log.warn("reporting the reverse stream's error failed: {}", reportFailed.toString());
                    }
                    wait = 1_000;
                }
                if (wait > 0 && stopped.await(wait, TimeUnit.MILLISECONDS)) return;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
