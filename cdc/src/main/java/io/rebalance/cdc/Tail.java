package io.rebalance.cdc;

import io.debezium.embedded.Connect;
import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import io.rebalance.cdc.reverse.ReverseLoop;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.copy.CopyProgress;
import io.rebalance.core.copy.KeyRefresher;
import io.rebalance.core.dynamo.BatchWriter;
import io.rebalance.core.dynamo.DynamoClients;
import io.rebalance.core.refused.RefusedRows;
import io.rebalance.core.retry.Retrier;
import io.rebalance.core.source.PageReader;
import io.rebalance.core.source.SchemaWatch;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.fence.PostgresFence;
import io.rebalance.protocol.handoff.ForwardHold;
import io.rebalance.protocol.handoff.KeyLog;
import io.rebalance.protocol.keyspace.RunKeys;
import io.rebalance.protocol.keyspace.TailKeys;
import io.rebalance.protocol.lease.LeaseLost;
import java.sql.Connection;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.apache.kafka.connect.source.SourceRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisException;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/**
 * {@code rebalance tail}: one process streams the source table's changes into DynamoDB; others stand by. Holding
 * the lease, it runs Debezium embedded (pgoutput, a publication for the one table, a named slot, no snapshot) and
 * applies each batch through {@link ChangeApplier}; a renewal thread keeps the lease, a publisher reports the
 * position every second, and {@link Reconciler} re-writes keys the backfill may have overwritten. When Debezium
 * stops on an error (Postgres restarted, say) it is started again from the saved offsets while the lease is held.
 */
public final class Tail implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Tail.class);

    private final MigrationConfig config;
    private final SourceTable table;
    private final DynamoDbClient dynamo;
    private final UnifiedJedis redis;
    private final TailKeys keys;
    private final TailLease lease;
    private final SlotGuard slotGuard;
    private final TailStats stats = new TailStats();
    private final CountDownLatch stopped = new CountDownLatch(1);
    private final AtomicReference<DebeziumEngine<?>> engine = new AtomicReference<>();
    private volatile boolean stopping;
    private Function<DynamoDbClient, DynamoDbStreamsClient> streamsOf = DynamoClients::streamsOf;

    public Tail(MigrationConfig config, SourceTable table, DynamoDbClient dynamo, UnifiedJedis redis, String owner) {
        this.config = config;
        this.table = table;
        this.dynamo = dynamo;
        this.redis = redis;
        this.keys = config.redis().keyspace().tail();
        this.lease = new TailLease(redis, keys, owner, config.tail().leaseTtlDuration());
        this.slotGuard = new SlotGuard(config, redis, keys, lease.ttl());
    }

    /**
     * Test hook: how the reverse stream gets its DynamoDB Streams client, so a test can delay the records it reads
     * (DynamoDB Streams on AWS promises no delivery time). Call before {@link #run}.
     */
    public Tail streamsOf(Function<DynamoDbClient, DynamoDbStreamsClient> open) {
        this.streamsOf = open;
        return this;
    }

    public TailStats stats() {
        return stats;
    }

    public TailKeys keys() {
        return keys;
    }

    /** Runs until {@link #close()}: stands by while another tail holds the lease, streams while this one does. */
    public void run() throws Exception {
        SourceSession session = new SourceSession(config.source());
        TailPreflight.TableId id;
        try (Connection c = session.openForPreflight()) {
            id = TailPreflight.check(c, table, config);
        }
        Duration ttl = lease.ttl();
        try {
            standByOrStream(session, id, ttl);
        } finally {
            quietly("release the tail lease", lease::release); // Redis may be away: the lease then lapses by itself
        }
    }

    /**
     * Streams while this tail holds the lease, stands by while another does, and rides out a Redis outage of any
     * length: the lease lapses (every write stops by its deadline, ADR 6), the tail stands by asking Redis again every
     * third of the TTL, and takes the lease back, with a new token, once Redis answers. An absent service is not an
     * error to exit on: a deployment keeps its tail without a restart loop.
     */
    private void standByOrStream(SourceSession session, TailPreflight.TableId id, Duration ttl) throws Exception {
        boolean announced = false;
        long redisAwaySince = 0;
        while (!stopping) {
            boolean acquired;
            try {
                acquired = lease.tryAcquire();
                if (!acquired && !announced) log.info("standing by: the tail lease is held by {}", lease.holder());
            } catch (JedisException e) {
                if (redisAwaySince == 0) {
                    redisAwaySince = System.currentTimeMillis();
                    log.warn(
                            "Redis does not answer ({}): this tail holds no lease and writes nothing; asking again"
                                    + " every {} ms",
                            e.toString(),
                            ttl.toMillis() / 3);
                }
                if (stopped.await(ttl.toMillis() / 3, TimeUnit.MILLISECONDS)) break;
                continue;
            }
            if (redisAwaySince != 0) {
                log.info("Redis answers again after {} ms", System.currentTimeMillis() - redisAwaySince);
                redisAwaySince = 0;
            }
            if (!acquired) {
                announced = true;
                if (stopped.await(ttl.toMillis() / 3, TimeUnit.MILLISECONDS)) break; // standby polls the lease
                continue;
            }
            announced = false;
            log.info(
                    "holding the tail lease as {}; streaming {} from slot {}",
                    lease.owner(),
                    id.dotted(),
                    config.tail().slotName());
            try {
                streamWhileLeased(session, id);
            } catch (LeaseLost e) {
                stats.leaseLapses.incrementAndGet();
                log.warn("{}", e.getMessage());
            } catch (JedisException | RebalanceException e) {
                if (!redisAway(e)) throw e;
                stats.leaseLapses.incrementAndGet();
                log.warn("the stream stopped, Redis does not answer ({}); standing by for the lease", e.toString());
            }
        }
    }

    /** A Redis that does not answer, as the client or the offset store says it. */
    private static boolean redisAway(Exception e) {
        return e instanceof JedisException
                || (e instanceof RebalanceException r && r.code() == ErrorCode.REDIS_UNREACHABLE);
    }

    private void streamWhileLeased(SourceSession session, TailPreflight.TableId id) throws Exception {
        var target = config.target();
        var t = config.tail();
        try (Connection c = session.openForPreflight()) {
            slotGuard.refuseLost(c);
            slotGuard.awaitFree(c, stopped);
        }
        RunKeys runKeys = config.redis().keyspace().run();
        TouchedKeys touched =
                new TouchedKeys(redis, keys, new CopyProgress(redis, runKeys), table.keyspace(), runKeys.status());
        KeyRefresher refresher = new KeyRefresher(
                new PageReader(table),
                table.codec(target),
                new BatchWriter(dynamo, target.table(), 25, Retrier.standard(), BatchWriter.RateLimiter.NONE));
        ScheduledExecutorService timers = Executors.newScheduledThreadPool(5, r -> {
            Thread th = new Thread(r, "tail-timer");
            th.setDaemon(true);
            return th;
        });
        RefusedRows refused = new RefusedRows(redis, config.redis().keyspace());
        TailStatus status =
                new TailStatus(redis, keys, session, t.slotName(), t.retentionWarnMb(), stats, lease.owner(), refused);
        AtomicReference<Throwable> leaseLost = new AtomicReference<>();
        try (SchemaWatch watch = new SchemaWatch(session, config, table.schema());
                PartitionWatch partitions = new PartitionWatch(
                        table, session, redis, keys, new ChangedSlots(redis, keys, table.keyspace()));
                TailHold hold = new TailHold(
                        new ForwardHold(redis, config.redis().keyspace().handoff()),
                        session,
                        new PostgresFence(config.cutover().pgFence()),
                        config.cutover().scopeOr(config.target().table()),
                        stats::appliedLsn);
                ChangeApplier applier = new ChangeApplier(
                        session,
                        refresher,
                        touched,
                        lease,
                        t.applyThreads(),
                        stats.commitWaits::incrementAndGet,
                        hold,
                        new KeyLog(redis, config.redis().keyspace().handoff()),
                        refused)) {
            Reconciler reconciler = new Reconciler(touched, applier, stats);
            long third = lease.ttl().toMillis() / 3;
            timers.scheduleWithFixedDelay(
                    () -> {
                        try {
                            lease.renew();
                        } catch (LeaseLost e) {
                            leaseLost.set(e);
                            closeEngine();
                        } catch (RuntimeException e) {
                            log.warn("renewing the tail lease failed: {}", e.toString());
                            try {
                                lease.check(); // past its deadline the lease is gone: stop even with no batch due
                            } catch (LeaseLost lapsed) {
                                leaseLost.compareAndSet(null, lapsed);
                                closeEngine();
                            }
                        }
                    },
                    third,
                    third,
                    TimeUnit.MILLISECONDS);
            timers.scheduleWithFixedDelay(
                    () -> quietly("publish status", () -> status.publish(touched.pending())), 0, 1, TimeUnit.SECONDS);
            timers.scheduleWithFixedDelay(
                    () -> quietly("reconcile", () -> reconciler.runOnce()), 1, 1, TimeUnit.SECONDS);
            AtomicReference<String> schemaChange = new AtomicReference<>();
            timers.scheduleWithFixedDelay(
                    () -> watch.changed().ifPresent(change -> {
                        if (schemaChange.compareAndSet(null, change))
                            closeEngine(); // before more rows in the old shape
                    }),
                    1,
                    1,
                    TimeUnit.SECONDS);
            if (id.partitioned()) {
                timers.scheduleWithFixedDelay(
                        () -> quietly("watch partitions", partitions::check), 0, 1, TimeUnit.SECONDS);
            }
            RepairQueue repairs = new RepairQueue(redis, keys);
            timers.execute(() -> serveRepairs(repairs, applier, leaseLost));
            timers.execute(() -> new ReverseLoop(config, table, dynamo, redis, lease, streamsOf)
                    .run(hold, () -> !stopping && leaseLost.get() == null, stopped));
            while (!stopping && leaseLost.get() == null) {
                if (schemaChange.get() != null) throw schemaChanged(schemaChange.get()); // seen while none ran
                Throwable failure = runEngine(id, applier);
                if (schemaChange.get() != null) throw schemaChanged(schemaChange.get());
                if (stopping || leaseLost.get() != null) break;
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
                    slotGuard.refuseLost(
                            c); // restarting a stream whose slot is gone would loop, or start from a new slot
                } catch (java.sql.SQLException unreachable) {
                    // Postgres is away: the restart below finds out again, and this check runs before the next one
                }
                stats.restarts.incrementAndGet();
                log.warn(
                        "the change stream stopped ({}); starting it again from the saved offsets in 2 s",
                        failure == null ? "no error" : failure.toString());
                if (stopped.await(2, TimeUnit.SECONDS)) break; // backoff before reconnecting to Postgres
            }
        } finally {
            timers.shutdownNow();
            status.close();
        }
        if (leaseLost.get() != null) throw (LeaseLost) leaseLost.get();
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

    /** Carries out verify's repair requests, one at a time with the stream's batches, while this tail streams. */
    private void serveRepairs(RepairQueue repairs, ChangeApplier applier, AtomicReference<Throwable> leaseLost) {
        while (!stopping && leaseLost.get() == null && !Thread.currentThread().isInterrupted()) {
            try {
                repairs.serveOne(applier, 1.0);
            } catch (LeaseLost e) {
                return;
            } catch (Exception e) {
                log.warn("a repair request failed, retrying in 1 s: {}", e.toString());
                try {
                    if (stopped.await(1, TimeUnit.SECONDS)) return; // backoff: the source or DynamoDB is away
                } catch (InterruptedException interrupted) {
                    return;
                }
            }
        }
    }

    /** @return why Debezium stopped, or null when it was asked to */
    private Throwable runEngine(TailPreflight.TableId id, ChangeApplier applier) throws InterruptedException {
        ChangeHandler handler = new ChangeHandler(
                applier, topic(id), table.keyColumn(), stats, lease, new ChangedSlots(redis, keys, table.keyspace()));
        AtomicReference<Throwable> error = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        Properties settings = properties(id);
        DebeziumEngine<ChangeEvent<SourceRecord, SourceRecord>> e = DebeziumEngine.create(Connect.class)
                .using(settings)
                .using((success, message, t) -> {
                    if (!success) error.set(t != null ? t : new IllegalStateException(message));
                    done.countDown();
                })
                .notifying(handler)
                .build();
        engine.set(e);
        try {
            if (stopping) return null;
            Thread runner = new Thread(e, "debezium");
            runner.start();
            try {
                done.await();
            } catch (InterruptedException interrupted) {
                close(); // an interrupted caller means stop: Debezium runs on its own thread and must be told
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

    /** The topic Debezium gives the table's change events under {@link #properties}. */
    public String topic(TailPreflight.TableId id) {
        return debezium().topic(id);
    }

    /** The Debezium settings this tail runs with (the bench runs Debezium alone on the same). */
    public Properties properties(TailPreflight.TableId id) {
        return debezium().properties(id);
    }

    private DebeziumSettings debezium() {
        return new DebeziumSettings(config, table, keys, lease.member());
    }

    private void closeEngine() {
        DebeziumEngine<?> e = engine.get();
        if (e == null) return;
        try {
            e.close();
        } catch (Exception ex) {
            log.warn("closing Debezium: {}", ex.toString());
        }
    }

    @Override
    public void close() {
        stopping = true;
        stopped.countDown();
        closeEngine();
    }

    @FunctionalInterface
    interface Task {
        void run() throws Exception;
    }

    static void quietly(String what, Task task) {
        try {
            task.run();
        } catch (LeaseLost e) {
            log.warn("{}: {}", what, e.getMessage());
        } catch (Exception e) {
            log.warn("{} failed: {}", what, e.toString());
        }
    }
}
