package io.rebalance.client;

import io.rebalance.protocol.fence.DynamoFence;
import io.rebalance.protocol.fence.FencedException;
import io.rebalance.protocol.fence.PostgresFence;
import io.rebalance.protocol.handoff.TargetWriteLog;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.lease.LeaseLost;
import io.rebalance.protocol.lock.LockLease;
import io.rebalance.protocol.lock.LockOwner;
import io.rebalance.protocol.lock.SharedExclusiveLock;
import io.rebalance.protocol.route.Route;
import io.rebalance.protocol.route.RouteMissingException;
import io.rebalance.protocol.route.RoutingTable;
import java.sql.SQLException;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * Wraps every application write to a moved table: takes a shared lease on the scope (waiting, up to {@code
 * maxWait}, while a cutover blocks writes), reads where writes go now, runs the write with a {@link WritePermit}, and
 * gives the lease back. A background thread renews leases of writes that run long; a write whose lease lapses anyway
 * is refused by the store's fence, never applied late (ADR 7).
 *
 * <pre>{@code
 * guard.write("room_events", permit -> switch (permit.target()) {
 *     case POSTGRES -> { try (Connection c = pool.getConnection()) { c.setAutoCommit(false);
 *             insert(c, event); permit.commitPostgres(c); } }
 *     case DYNAMODB -> permit.writeDynamo(dynamo, put(event));
 * });
 * }</pre>
 *
 * <p>A table moved part by part ({@link GuardSettings#withParts}) is written with the row's partition-key value,
 * {@code guard.write("room_events", tenantId, permit -> ...)}: the guard resolves the value's part locally and guards
 * the write under that part's scope, so a cutover of one part blocks only the writes to its rows.
 *
 * <p>Thread-safe: one guard per application process.
 */
public final class WriteGuard implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(WriteGuard.class);

    private final UnifiedJedis redis;
    private final GuardSettings settings;
    private final RoutingTable routes;
    private final PostgresFence postgresFence;
    private final DynamoFence dynamoFence;
    private final Map<String, SharedExclusiveLock> locks = new ConcurrentHashMap<>();
    private final Map<String, TargetWriteLog> writeLogs = new ConcurrentHashMap<>();
    private final Map<LockLease, Boolean> active = new ConcurrentHashMap<>();
    private final Map<String, Blocked.Counter> blocked = new ConcurrentHashMap<>();
    private final ScheduledExecutorService renewer;
    private final Keyspace keyspace;

    /** @param dynamo the application's DynamoDB client, used for fence checks and by {@link WritePermit#writeDynamo} */
    public WriteGuard(UnifiedJedis redis, DynamoDbClient dynamo, GuardSettings settings) {
        this(redis, dynamo, settings, true);
    }

    /** @param renew false only in tests that play a paused process, whose renewals stop along with its writes */
    WriteGuard(UnifiedJedis redis, DynamoDbClient dynamo, GuardSettings settings, boolean renew) {
        this.redis = redis;
        this.settings = settings;
        this.keyspace = new Keyspace(settings.prefix());
        this.routes = new RoutingTable(redis, keyspace);
        this.postgresFence = new PostgresFence(settings.postgresFenceTable());
        this.dynamoFence = new DynamoFence(dynamo, settings.dynamoFenceTable());
        this.renewer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "rebalance-guard-renewer");
            t.setDaemon(true);
            return t;
        });
        long third = settings.leaseTtl().toMillis() / 3;
        if (renew) renewer.scheduleWithFixedDelay(this::renewAll, third, third, TimeUnit.MILLISECONDS);
    }

    /** A write to run under the guard. */
    @FunctionalInterface
    public interface GuardedWrite<T> {
        T run(WritePermit permit) throws Exception;
    }

    /** A write without a result. */
    @FunctionalInterface
    public interface GuardedAction {
        void run(WritePermit permit) throws Exception;
    }

    /**
     * @throws io.rebalance.protocol.lock.LockWaitTimeoutException writes stayed blocked longer than {@code maxWait}
     * @throws io.rebalance.protocol.fence.FencedException a store refused the write (its lease lapsed meanwhile)
     * @throws RouteMissingException the scope has no routing entry (none was prepared, or Redis lost it)
     */
    public <T> T write(String scope, GuardedWrite<T> write) throws Exception {
        return write(scope, null, write);
    }

    /**
     * A write to a row of a table moved part by part: guarded under the part of {@code partKey}, exactly as {@link
     * #write(String, GuardedWrite)} guards a whole table's.
     *
     * @param partKey the row's partition-key value (the first key column); null only for a scope that moves whole
     * @throws IllegalArgumentException when the scope has parts and {@code partKey} is null
     */
    public <T> T write(String table, Object partKey, GuardedWrite<T> write) throws Exception {
        String scope = settings.scopeOf(table, partKey);
        SharedExclusiveLock lock = locks.computeIfAbsent(scope, s -> new SharedExclusiveLock(redis, keyspace.scope(s)));
        Blocked.Counter counter = blocked.computeIfAbsent(scope, s -> new Blocked.Counter());
        LockLease lease =
                lock.acquireShared(LockOwner.currentThread(), settings.leaseTtl(), settings.maxWait(), counter::add);
        active.put(lease, Boolean.TRUE);
        try {
            // Read after the lease is held: the route cannot change until every shared lease is gone.
            Route route = routes.get(scope).orElseThrow(() -> new RouteMissingException(scope, keyspace.prefix()));
            TargetWriteLog log = writeLogs.computeIfAbsent(scope, s -> new TargetWriteLog(redis, keyspace.scope(s)));
            return write.run(new WritePermit(route, lease, postgresFence, dynamoFence, log));
        } catch (Exception e) {
            // the table's trigger refused a statement of the write: the same refusal the commit's check gives
            Optional<SQLException> refused = FencedException.refusal(e);
            if (refused.isPresent()) throw new FencedException(scope, lease.token(), refused.get());
            throw e;
        } finally {
            active.remove(lease);
            lock.release(lease);
        }
    }

    public void run(String scope, GuardedAction action) throws Exception {
        run(scope, null, action);
    }

    /** A write without a result to a row of a table moved part by part; see {@link #write(String, Object, GuardedWrite)}. */
    public void run(String table, Object partKey, GuardedAction action) throws Exception {
        write(table, partKey, permit -> {
            action.run(permit);
            return null;
        });
    }

    /**
     * How many of this guard's writes to {@code scope} (a part's scope, {@code table/part}, for a table moved part by
     * part) waited for a cutover's exclusive lease, and how long in all, since the guard was made.
     */
    public Blocked blocked(String scope) {
        Blocked.Counter c = blocked.get(scope);
        return c == null ? new Blocked(0, 0) : c.read();
    }

    private void renewAll() {
        for (LockLease lease : active.keySet()) {
            try {
                locks.get(lease.keys().scope()).renew(lease, settings.leaseTtl());
            } catch (LeaseLost e) {
                active.remove(lease);
                log.warn("{}; its write will be refused by the store's fence", e.getMessage());
            } catch (RuntimeException e) {
                log.warn("renewing a write's lease failed: {}", e.toString());
            }
        }
    }

    @Override
    public void close() {
        renewer.shutdownNow();
    }
}
