package io.rebalance.cdc;

import io.debezium.engine.DebeziumEngine;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.DynamoClients;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.keyspace.TailKeys;
import io.rebalance.protocol.lease.LeaseLost;
import java.sql.Connection;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisException;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/**
 * {@code rebalance tail}: one process streams the source table's changes into DynamoDB; others stand by. This class
 * keeps the lease and the loop around it (stand by, stream, ride out a Redis outage); holding the lease, it runs
 * the {@link ForwardStream}: Debezium embedded (pgoutput, a publication for the one table, a named slot, no
 * snapshot), each batch applied through {@link ChangeApplier}, and the repair and reverse loops beside it.
 */
public final class Tail implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Tail.class);

    final MigrationConfig config;
    final SourceTable table;
    final DynamoDbClient dynamo;
    final UnifiedJedis redis;
    private final TailKeys keys;
    private final TailMembers members;
    final TailLease lease;
    final SlotGuard slotGuard;
    private final TailStats stats = new TailStats();
    final CountDownLatch stopped = new CountDownLatch(1);
    final AtomicReference<DebeziumEngine<?>> engine = new AtomicReference<>();
    private volatile boolean stopping;
    Function<DynamoDbClient, DynamoDbStreamsClient> streamsOf = DynamoClients::streamsOf;

    public Tail(MigrationConfig config, SourceTable table, DynamoDbClient dynamo, UnifiedJedis redis, String owner) {
        this.config = config;
        this.table = table;
        this.dynamo = dynamo;
        this.redis = redis;
        this.keys = config.redis().keyspace().tail();
        this.lease = new TailLease(redis, keys, owner, config.tail().leaseTtl());
        this.members = new TailMembers(redis, keys);
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

    boolean stopping() {
        return stopping;
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
        StreamWarmUp.run(); // before asking for the lease: a standby then takes over without a cold start
        Duration ttl = lease.ttl();
        try {
            standByOrStream(session, id, ttl);
        } finally {
            quietly("release the tail lease", lease::release); // Redis may be away: the lease then lapses by itself
            quietly("leave the tails", () -> members.leave(lease.owner()));
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
        long seenAt = 0;
        while (!stopping) {
            stats.lastTickMs.set(System.currentTimeMillis());
            MDC.put("phase", "standby");
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
                if (System.currentTimeMillis() - seenAt >= ttl.toMillis() / 3) {
                    quietly("say this tail stands by", () -> members.seen(lease.owner()));
                    seenAt = System.currentTimeMillis();
                }
                announced = true;
                if (stopped.await(standbyPoll(ttl).toMillis(), TimeUnit.MILLISECONDS)) break;
                continue;
            }
            announced = false;
            log.info(
                    "holding the tail lease as {}; streaming {} from slot {}",
                    lease.owner(),
                    id.dotted(),
                    config.tail().slotName());
            stats.active.set(true);
            MDC.put("phase", "stream");
            try {
                new ForwardStream(this, session, id).run();
            } catch (LeaseLost e) {
                stats.leaseLapses.incrementAndGet();
                log.warn("{}", e.getMessage());
            } catch (JedisException | RebalanceException e) {
                if (!redisAway(e)) throw e;
                stats.leaseLapses.incrementAndGet();
                log.warn("the stream stopped, Redis does not answer ({}); standing by for the lease", e.toString());
            } finally {
                stats.active.set(false);
            }
        }
    }

    /**
     * How often a standby asks for the lease: a tail stopped by SIGTERM gives it up at once, and the standby must
     * stream within a second or so, not a third of the TTL later; one SET a poll is nothing to Redis.
     */
    static Duration standbyPoll(Duration ttl) {
        return ttl.dividedBy(3).compareTo(STANDBY_POLL) < 0 ? ttl.dividedBy(3) : STANDBY_POLL;
    }

    private static final Duration STANDBY_POLL = Duration.ofMillis(100);

    /** A Redis that does not answer, as the client or the offset store says it. */
    private static boolean redisAway(Exception e) {
        return e instanceof JedisException
                || (e instanceof RebalanceException r && r.code() == ErrorCode.REDIS_UNREACHABLE);
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

    @Override
    public void close() {
        stopping = true;
        stopped.countDown();
        ForwardStream.closeEngine(engine);
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
