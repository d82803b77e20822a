package io.rebalance.sim;

import io.rebalance.client.GuardSettings;
import io.rebalance.client.Router;
import io.rebalance.client.WriteGuard;
import io.rebalance.client.WritePermit;
import io.rebalance.core.codec.ColumnSpec;
import io.rebalance.core.codec.RowCodec;
import io.rebalance.core.codec.SourceRow;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.slot.Ulid;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.protocol.route.Target;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.Put;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.Update;

/**
 * An application on a room_events table (id, room_id, kind, data, created_at, seq) as applications take part in a
 * cutover: every write goes through a {@link WriteGuard} to wherever the route says, every read asks the {@link Router}
 * where to read. Writers insert new events (ULIDs of now) and add one to the seq of events already there; readers
 * read an event's seq and check it against the {@link Ledger}: a read that starts after a write was acknowledged must
 * see it, whichever store it reads.
 */
public final class AppSimulator implements AutoCloseable {
    /** The application_name of the simulated application's Postgres sessions. */
    public static final String APPLICATION_NAME = "rebalance-app-simulator";

    private static final DateTimeFormatter TS =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSSSSS'+00'").withZone(ZoneOffset.UTC);
    /** The counter column, and its attribute (the simulated table keeps column names in DynamoDB). */
    static final String SEQ = "seq";

    private static final String[] KINDS = {"message", "join", "leave", "reaction", "edit"};

    /**
     * @param writers threads writing, together {@code writesPerSecond}
     * @param readers threads reading, together {@code readsPerSecond}
     * @param updateShare the share of writes that add one to an existing event's seq; the rest insert
     * @param oldShare the share of writes that update an event from before the simulation (older slots)
     */
    public record Load(
            int writers, int writesPerSecond, int readers, int readsPerSecond, double updateShare, double oldShare) {
        /**
         * The cutover's acceptance load: 500 writes/s from 40 threads, as from concurrent requests (a thread waits for each
         * write, so fewer threads could not keep the rate while a write takes tens of ms), 200 reads/s on 4.
         */
        public static Load acceptance() {
            return new Load(40, 500, 4, 200, 0.3, 0.01);
        }

        /** The same load with another share of updates (the rest of the writes insert). */
        public Load withUpdateShare(double share) {
            return new Load(writers, writesPerSecond, readers, readsPerSecond, share, oldShare);
        }
    }

    private final String scope;
    private final String table;
    private final String targetTable;
    private final SourceSession session;
    private final DynamoDbClient dynamo;
    private final RowCodec codec;
    private final WriteGuard guard;
    private final Router router;
    private final Ledger ledger = new Ledger();
    private final ReentrantReadWriteLock gate = new ReentrantReadWriteLock();
    private final StoreSeqs stores;
    private final Readers reading;
    private final FirstErrors errors = new FirstErrors();
    private final Latencies writeLatency = new Latencies();
    private ScheduledExecutorService threads;
    /** Each writer keeps its own Postgres connection; {@link #close} closes them once the threads stop. */
    private final List<Writer> writers = new ArrayList<>();

    private int existing;
    private volatile boolean paused;
    private volatile Target unguarded;

    public AppSimulator(
            MigrationConfig config, SourceTable source, UnifiedJedis redis, DynamoDbClient dynamo, GuardSettings g) {
        this.scope = config.cutover().scope();
        this.table = source.name(); // as the tail's own statements use it: qualified and quoted
        this.targetTable = config.target().table();
        this.session = new SourceSession(config.source());
        this.dynamo = dynamo;
        this.codec = source.codec(config.target());
        this.guard = new WriteGuard(redis, dynamo, g);
        this.router = new Router(redis, g.prefix());
        this.stores = new StoreSeqs(session, table, dynamo, targetTable, codec);
        this.reading = new Readers(ledger, router, scope, stores, errors::add);
    }

    /** Reads every event already in Postgres into the ledger, then starts writing and reading. */
    public AppSimulator start(Load load, long seed) throws SQLException {
        try (Connection c = session.open();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT id, seq FROM " + table)) {
            while (rs.next()) {
                ledger.existing(rs.getString(1), rs.getLong(2));
                existing++;
            }
        }
        threads = Executors.newScheduledThreadPool(load.writers() + load.readers(), r -> {
            Thread t = new Thread(r, "app-simulator");
            t.setDaemon(true);
            return t;
        });
        long writePeriod = 1_000_000L * load.writers() / load.writesPerSecond();
        for (int w = 0; w < load.writers(); w++) {
            Writer writer = new Writer(new Random(seed + w), load);
            writers.add(writer);
            threads.scheduleAtFixedRate(writer, writePeriod, writePeriod, TimeUnit.MICROSECONDS);
        }
        long readPeriod = 1_000_000L * load.readers() / load.readsPerSecond();
        for (int r = 0; r < load.readers(); r++) {
            Runnable reader = reading.reader(new Random(seed + 1_000 + r));
            threads.scheduleAtFixedRate(reader, readPeriod, readPeriod, TimeUnit.MICROSECONDS);
        }
        return this;
    }

    /**
     * Writes straight to {@code target} with plain statements (no lease, no route, no fence; {@code PutItem} and
     * {@code UpdateItem} instead of a transaction), or through the guard again with null: the baseline of what the
     * guard costs. Never during a cutover.
     */
    public void unguarded(Target target) {
        pause();
        this.unguarded = target;
        resume();
    }

    /** Stops issuing writes and returns once none is in flight; reads go on. */
    public void pause() {
        paused = true;
        gate.writeLock().lock(); // every write holds the read lock while it runs
        gate.writeLock().unlock();
    }

    public void resume() {
        paused = false;
    }

    public Ledger ledger() {
        return ledger;
    }

    public long reads(Target target) {
        return reading.reads(target);
    }

    /** Reads that returned an older seq than one acknowledged before they began. */
    public List<String> staleReads() {
        return reading.staleReads();
    }

    /** The first failures of writes and reads, with their reasons. */
    public List<String> errors() {
        return errors.list();
    }

    /** Guarded write latencies (lease wait included) since the last call, in microseconds. */
    public long[] drainWriteLatencies() {
        return writeLatency.drain();
    }

    /** Every event's seq in Postgres, read in one query. */
    public Map<String, Long> postgresSeqs() throws SQLException {
        return stores.postgres();
    }

    /** Every item's seq in DynamoDB: a consistent scan. */
    public Map<String, Long> dynamoSeqs() {
        return stores.dynamo();
    }

    /**
     * DynamoDB against the ledger, then row by row against {@code postgresSeqs}: a write that failed may have landed
     * or not (the ledger allows either), but then in both stores or in neither. @return the first 10 problems
     */
    public List<String> dynamoAgainst(Map<String, Long> postgresSeqs) {
        Map<String, Long> items = dynamoSeqs();
        List<String> out = ledger.check("dynamodb", items, 10);
        for (Map.Entry<String, Long> row : postgresSeqs.entrySet()) {
            if (out.size() >= 10) break;
            if (!row.getValue().equals(items.get(row.getKey()))) {
                out.add("DynamoDB differs from Postgres on id " + row.getKey() + ": seq " + items.get(row.getKey())
                        + " against " + row.getValue());
            }
        }
        return out;
    }

    /**
     * Returns once {@code target} has acknowledged at least {@code atLeast} writes in all.
     *
     * @throws IllegalStateException after {@code bound}, naming the count and the first errors
     */
    public void awaitAcknowledged(Target target, long atLeast, Duration bound) {
        long deadline = System.nanoTime() + bound.toNanos();
        while (ledger.acknowledged(target) < atLeast) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the application had " + ledger.acknowledged(target)
                        + " writes acknowledged by " + target + ", not " + atLeast + "; errors: " + errors());
            }
            LockSupport.parkNanos(Duration.ofMillis(5).toNanos()); // writes arrive at the application's rate
        }
    }

    /** One writer thread's work: one guarded write per tick, on its own Postgres connection. */
    private final class Writer implements Runnable {
        private final Random random;
        private final Load load;
        private Connection pg;

        Writer(Random random, Load load) {
            this.random = random;
            this.load = load;
        }

        @Override
        public void run() {
            if (paused) return;
            gate.readLock().lock();
            try {
                if (!paused) writeOne();
            } finally {
                gate.readLock().unlock();
            }
        }

        private void writeOne() {
            String id = null;
            double dice = random.nextDouble();
            if (dice < load.oldShare()) id = ledger.pickExisting(random, existing);
            else if (dice < load.updateShare()) id = ledger.pick(random);
            boolean insert = id == null;
            if (insert) id = Ulid.of(System.currentTimeMillis(), random.nextLong() & 0xFFFF, random.nextLong());
            Ledger.Entry entry = insert ? ledger.inserting(id) : ledger.entry(id);
            String theId = id;
            long start = System.nanoTime();
            try {
                Target direct = unguarded;
                Target where = direct != null
                        ? write(null, direct, theId, insert)
                        : guard.write(scope, permit -> write(permit, permit.target(), theId, insert));
                writeLatency.add((System.nanoTime() - start) / 1_000);
                ledger.acknowledged(theId, entry, where, insert);
            } catch (Exception e) {
                ledger.failed(entry);
                errors.add("write of " + theId + " failed: " + e);
                pg = StoreSeqs.closeQuietly(pg); // its state is unknown; the next write opens a fresh connection
            }
        }

        /** @param permit null for a write without the guard */
        private Target write(WritePermit permit, Target target, String id, boolean insert) throws SQLException {
            if (target == Target.POSTGRES) writePostgres(permit, id, insert);
            else writeDynamo(permit, id, insert);
            return target;
        }

        private void writePostgres(WritePermit permit, String id, boolean insert) throws SQLException {
            if (pg == null) {
                pg = stores.open();
                pg.setAutoCommit(false);
            }
            try {
                String sql = insert
                        ? "INSERT INTO " + table + " (id, room_id, kind, data, created_at, seq)"
                                + " VALUES (?, ?::uuid, ?, ?::jsonb, ?::timestamptz, 1)"
                        : "UPDATE " + table + " SET seq = seq + 1 WHERE id = ?";
                try (PreparedStatement ps = pg.prepareStatement(sql)) {
                    ps.setString(1, id);
                    if (insert) {
                        Event e = event(id);
                        ps.setString(2, e.room);
                        ps.setString(3, e.kind);
                        ps.setString(4, e.data);
                        ps.setString(5, e.createdAt);
                    }
                    if (ps.executeUpdate() != 1) throw new SQLException("no row " + id + " to update");
                }
                if (permit != null) permit.commitPostgres(pg); // the fence checked and the commit, one round trip
                else pg.commit();
            } catch (SQLException | RuntimeException e) {
                pg.rollback();
                throw e;
            }
        }

        private void writeDynamo(WritePermit permit, String id, boolean insert) {
            TransactWriteItem write;
            if (insert) {
                Event e = event(id);
                Map<String, String> text =
                        Map.of("id", id, "room_id", e.room, "kind", e.kind, "data", e.data, "created_at", e.createdAt);
                Object[] values = new Object[codec.columns().size()];
                List<ColumnSpec> cols = codec.columns();
                for (int i = 0; i < values.length; i++) {
                    values[i] = text.getOrDefault(cols.get(i).name(), "1"); // seq starts at 1
                }
                Map<String, AttributeValue> item = codec.encode(new SourceRow(id, values));
                write = SeqWrites.insert(targetTable, item);
            } else {
                write = SeqWrites.increment(targetTable, codec.key(id));
            }
            if (permit != null) permit.writeDynamo(dynamo, write);
            else if (insert) {
                Put put = write.put();
                dynamo.putItem(b -> b.tableName(put.tableName())
                        .item(put.item())
                        .conditionExpression(put.conditionExpression())
                        .expressionAttributeNames(put.expressionAttributeNames()));
            } else {
                Update u = write.update();
                dynamo.updateItem(b -> b.tableName(u.tableName())
                        .key(u.key())
                        .updateExpression(u.updateExpression())
                        .conditionExpression(u.conditionExpression())
                        .expressionAttributeNames(u.expressionAttributeNames())
                        .expressionAttributeValues(u.expressionAttributeValues()));
            }
        }

        private Event event(String id) {
            return new Event(
                    new UUID(random.nextInt(50), 7).toString(),
                    KINDS[random.nextInt(KINDS.length)],
                    "{\"n\": " + random.nextInt(1_000) + ", \"by\": \"simulator\"}",
                    TS.format(Instant.ofEpochMilli(Ulid.millis(id))));
        }
    }

    private record Event(String room, String kind, String data, String createdAt) {}

    @Override
    public void close() {
        WriterThreads.stop(threads);
        // after the threads stopped, so no write is using them
        for (Writer w : writers) w.pg = StoreSeqs.closeQuietly(w.pg);
        reading.closeConnections();
        guard.close();
    }
}
