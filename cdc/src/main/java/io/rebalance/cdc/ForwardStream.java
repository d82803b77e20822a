package io.rebalance.cdc;

import io.debezium.embedded.Connect;
import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import io.rebalance.cdc.reverse.ReverseLoop;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.handoff.BypassedWrites;
import io.rebalance.protocol.keyspace.TailKeys;
import io.rebalance.protocol.lease.LeaseLost;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import org.apache.kafka.connect.source.SourceRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/**
 * The forward stream for as long as this tail holds the lease: the wiring of its collaborators (applier, hold, key
 * log, touched keys, status, reconciliation, the schema and partition watches, the repair and reverse loops), and
 * the Debezium engine, started again from the saved offsets when it stops on an error. It ends when the lease is
 * lost (throwing {@link LeaseLost}), the tail stops, the schema changes or the slot is gone.
 */
final class ForwardStream {
    private static final Logger log = LoggerFactory.getLogger(ForwardStream.class);

    private final Tail tail;
    private final SourceSession session;
    private final TailPreflight.TableId id;
    private final MigrationConfig config;
    private final SourceTable table;
    private final DynamoDbClient dynamo;
    private final UnifiedJedis redis;
    private final TailKeys keys;
    private final TailLease lease;
    private final SlotGuard slotGuard;
    private final TailStats stats;
    private final CountDownLatch stopped;
    private final AtomicReference<DebeziumEngine<?>> engine;
    private final Function<DynamoDbClient, DynamoDbStreamsClient> streamsOf;
    private final long created;

    ForwardStream(Tail tail, SourceSession session, TailPreflight.TableId id) {
        this.tail = tail;
        this.session = session;
        this.id = id;
        this.config = tail.config;
        this.table = tail.table;
        this.dynamo = tail.dynamo;
        this.redis = tail.redis;
        this.keys = tail.keys();
        this.lease = tail.lease;
        this.slotGuard = tail.slotGuard;
        this.stats = tail.stats();
        this.stopped = tail.stopped;
        this.engine = tail.engine;
        this.streamsOf = tail.streamsOf;
        this.created = System.nanoTime();
    }

    void run() throws Exception {
        try (Connection c = session.openForPreflight()) {
            slotGuard.refuseLost(c);
            slotGuard.awaitFree(c, stopped);
        }
        AtomicReference<Throwable> leaseLost = new AtomicReference<>();
        AtomicReference<String> schemaChange = new AtomicReference<>();
        try (StreamParts parts = new StreamParts(tail, session)) {
            ScheduledExecutorService timers = Executors.newScheduledThreadPool(5, r -> {
                Thread th = new Thread(r, "tail-timer");
                th.setDaemon(true);
                return th;
            });
            try {
                schedule(timers, parts, leaseLost, schemaChange);
                restartUntilDone(parts.applier, leaseLost, schemaChange);
            } finally {
                timers.shutdownNow(); // before the parts they use are closed
            }
        }
        if (leaseLost.get() != null) throw (LeaseLost) leaseLost.get();
    }

    /**
     * The stream's timers (lease renewal, status, reconciliation, the schema and partition watches) and its two loops
     * (repairs, the reverse stream), on {@code timers}.
     */
    private void schedule(
            ScheduledExecutorService timers,
            StreamParts parts,
            AtomicReference<Throwable> leaseLost,
            AtomicReference<String> schemaChange) {
        long third = lease.ttl().toMillis() / 3;
        timers.scheduleWithFixedDelay(() -> renewLease(leaseLost), third, third, TimeUnit.MILLISECONDS);
        timers.scheduleWithFixedDelay(
                () -> Tail.quietly("publish status", () -> parts.status.publish(parts.touched.pending())),
                0,
                1,
                TimeUnit.SECONDS);
        timers.scheduleWithFixedDelay(
                () -> Tail.quietly("reconcile", parts.reconciler::runOnce), 1, 1, TimeUnit.SECONDS);
        timers.scheduleWithFixedDelay(
                () -> parts.watch.changed().ifPresent(change -> {
                    if (schemaChange.compareAndSet(null, change))
                        closeEngine(engine); // before more rows in the old shape
                }),
                1,
                1,
                TimeUnit.SECONDS);
        if (id.partitioned()) {
            timers.scheduleWithFixedDelay(
                    () -> Tail.quietly("watch partitions", parts.partitions::check), 0, 1, TimeUnit.SECONDS);
        }
        BooleanSupplier holding = () -> !tail.stopping() && leaseLost.get() == null;
        timers.execute(
                () -> new RepairLoop(parts.repairs, bypassed(parts.scopes), parts.applier, stopped).run(holding));
        timers.execute(() ->
                new ReverseLoop(config, table, dynamo, redis, lease, streamsOf).run(parts.hold, holding, stopped));
    }

    private void renewLease(AtomicReference<Throwable> leaseLost) {
        try {
            lease.renew();
        } catch (LeaseLost e) {
            leaseLost.set(e);
            closeEngine(engine);
        } catch (RuntimeException e) {
            log.warn("renewing the tail lease failed: {}", e.toString());
            try {
                lease.check(); // past its deadline the lease is gone: stop even with no batch due
            } catch (LeaseLost lapsed) {
                leaseLost.compareAndSet(null, lapsed);
                closeEngine(engine);
            }
        }
    }

    /** Runs the engine, and again from the saved offsets after it stops on an error, until a reason to end holds. */
    private void restartUntilDone(
            ChangeApplier applier, AtomicReference<Throwable> leaseLost, AtomicReference<String> schemaChange)
            throws Exception {
        while (!tail.stopping() && leaseLost.get() == null) {
            if (schemaChange.get() != null) throw schemaChanged(schemaChange.get()); // seen while none ran
            Throwable failure =
                    runEngine(applier, () -> tail.stopping() || leaseLost.get() != null || schemaChange.get() != null);
            applier.drain(); // a batch the engine left landing is delivered again: its writes end first
            if (schemaChange.get() != null) throw schemaChanged(schemaChange.get());
            if (tail.stopping() || leaseLost.get() != null) return;
            if (SlotGuard.offsetsGone(failure)) {
                throw new RebalanceException(
                        ErrorCode.TAIL_OFFSETS_GONE,
                        "the tail's saved position (" + keys.offsets() + ") is older than anything replication"
                                + " slot '" + config.tail().slotName() + "' still holds: the slot was dropped or"
                                + " recreated, so the changes in between never reached DynamoDB. Start over:"
                                + " `rebalance tail --drop-slot`, `rebalance reset`, then `rebalance tail` and"
                                + " `rebalance copy` again");
            }
            LeaseLost lost = LeaseLost.in(failure); // a write refused by its fence stopped the stream
            if (lost != null) throw lost;
            lease.check();
            try (Connection c = session.openForPreflight()) {
                slotGuard.refuseLost(c); // restarting a stream whose slot is gone would loop, or start from a new slot
            } catch (SQLException unreachable) {
                // Postgres is away: the restart below finds out again, and this check runs before the next one
            }
            stats.restarts.incrementAndGet();
            log.warn(
                    "the change stream stopped ({}); starting it again from the saved offsets in 2 s",
                    failure == null ? "no error" : failure.toString());
            if (stopped.await(2, TimeUnit.SECONDS)) return; // backoff before reconnecting to Postgres
        }
    }

    private List<BypassedWrites> bypassed(TailScopes scopes) {
        return scopes.keys().stream().map(k -> new BypassedWrites(redis, k)).toList();
    }

    /** The tail reads rows with the columns it started with: after an ALTER TABLE its items would have another shape. */
    private RebalanceException schemaChanged(String change) {
        return new RebalanceException(
                ErrorCode.SCHEMA_CHANGED,
                "source table " + table.name() + " changed while the tail ran: " + change + ". The tail stopped so"
                        + " that no more items are written in the old shape; its position is saved. To go on:"
                        + " `rebalance copy --accept-schema` (records the table as it is now), start `rebalance tail`"
                        + " again, then `rebalance verify --all --repair` rewrites what was written before"
                        + " (docs/schema-changes.md)");
    }

    /**
     * @param stopWanted whether a reason to stop holds (the tail closing, the lease lost, the schema changed): while
     *     it does, the engine is asked to close again until it takes the close
     * @return why Debezium stopped, or null when it was asked to
     */
    private Throwable runEngine(ChangeApplier applier, BooleanSupplier stopWanted) throws InterruptedException {
        ChangeHandler handler = new ChangeHandler(
                applier,
                tail.topic(id),
                table.key(),
                stats,
                lease,
                new ChangedSlots(redis, keys, table.keyspace()),
                bypassed(applier.scopes()),
                config.tail().maxBatch());
        AtomicReference<Throwable> error = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        Properties settings = tail.properties(id);
        DebeziumEngine<ChangeEvent<SourceRecord, SourceRecord>> e = DebeziumEngine.create(Connect.class)
                .using(settings)
                .using((success, message, t) -> {
                    if (!success) error.set(t != null ? t : new IllegalStateException(message));
                    done.countDown();
                })
                .using(new DebeziumEngine.ConnectorCallback() {
                    @Override
                    public void taskStarted() {
                        log.info(
                                "the change stream is up {} ms after taking the lease",
                                (System.nanoTime() - created) / 1_000_000);
                    }
                })
                .notifying(handler)
                .build();
        engine.set(e);
        try {
            if (tail.stopping()) return null;
            Thread runner = new Thread(e, "debezium");
            runner.start();
            try {
                while (!done.await(100, TimeUnit.MILLISECONDS)) {
                    // Debezium refuses a close while its task starts (IllegalStateException): a stop asked then
                    // would be lost, and the engine would stream on, so it is asked again until the engine stops
                    if (stopWanted.getAsBoolean()) closeEngine(engine);
                }
            } catch (InterruptedException interrupted) {
                tail.close(); // an interrupted caller means stop: Debezium runs on its own thread and must be told
                runner.join(10_000);
                throw interrupted;
            }
            runner.join(10_000);
            engine.set(null);
            return error.get();
        } finally {
            EngineSecrets.forget(settings); // the handles die with the engine
        }
    }

    /** Stops the running engine, if any: it returns from its run, and the stream decides what comes next. */
    static void closeEngine(AtomicReference<DebeziumEngine<?>> engine) {
        DebeziumEngine<?> e = engine.get();
        if (e == null) return;
        try {
            e.close();
        } catch (IllegalStateException notNow) { // starting its task, or already stopping: runEngine asks again
            log.debug("closing Debezium: {}", notNow.getMessage());
        } catch (Exception ex) {
            log.warn("closing Debezium: {}", ex.toString());
        }
    }
}
