package io.rebalance.sim;

import io.rebalance.client.GuardSettings;
import io.rebalance.client.Router;
import io.rebalance.client.WriteGuard;
import io.rebalance.client.WritePermit;
import io.rebalance.core.codec.ColumnSpec;
import io.rebalance.core.codec.RowCodec;
import io.rebalance.core.codec.SourceRow;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.protocol.route.Target;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;

/**
 * An application on a multi-tenant table {@code (tenant_id int, id bigint, seq bigint, created_at timestamptz,
 * PRIMARY KEY (tenant_id, id))} moved part by part: each write goes through a {@link WriteGuard} under the part of
 * its tenant, to the store the part's route names, and each read asks the {@link Router} for the tenant's part. One
 * writer per tenant inserts rows, adds one to a row's seq, or deletes a row; its ledger says what each row must be.
 * A read that started after a write was acknowledged must see it, whichever store it reads.
 */
public final class TenantSimulator implements AutoCloseable {
    private static final DateTimeFormatter TS =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSSSSS'+00'").withZone(ZoneOffset.UTC);

    /** What a row must be: its seq, or deleted; unknown after a write that failed (it may have landed or not). */
    private static final class Row {
        volatile long seq;
        volatile boolean deleted;
        volatile boolean writing;
        volatile boolean unknown;

        Row(long seq) {
            this.seq = seq;
        }
    }

    private final String base;
    private final String table;
    private final String targetTable;
    private final SourceTable source;
    private final SourceSession session;
    private final DynamoDbClient dynamo;
    private final RowCodec codec;
    private final WriteGuard guard;
    private final Router router;
    private final int tenants;
    private final Map<String, Row> rows = new ConcurrentHashMap<>();
    private final List<String> keys = new ArrayList<>(); // the ledger's keys, drawn by readers; never removed

    private final AtomicLong nextId = new AtomicLong(1_000_000);
    private final AtomicLong acknowledged = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong reads = new AtomicLong();
    private final List<String> stale = new ArrayList<>();
    private final FirstErrors errors = new FirstErrors();
    private ScheduledExecutorService threads;
    private final List<Writer> writers = new ArrayList<>();
    /** Each tenant's acknowledged write latencies, lease wait included, in microseconds. */
    private final Map<Integer, Latencies> latencies = new ConcurrentHashMap<>();
    /** Each reader thread keeps a Postgres connection, closed with the simulator. */
    private final ThreadLocal<Connection> readers = new ThreadLocal<>();

    private final List<Connection> readerConnections = new ArrayList<>();

    /** @param base the table's scope; its parts come with {@code settings} ({@link GuardSettings#withParts}) */
    public TenantSimulator(
            String base,
            SourceTable source,
            SourceSession session,
            String targetTable,
            UnifiedJedis redis,
            DynamoDbClient dynamo,
            GuardSettings settings,
            RowCodec codec,
            int tenants) {
        this.base = base;
        this.source = source;
        this.table = source.name();
        this.targetTable = targetTable;
        this.session = session;
        this.dynamo = dynamo;
        this.codec = codec;
        this.guard = new WriteGuard(redis, dynamo, settings);
        this.router = new Router(redis, settings);
        this.tenants = tenants;
    }

    /** Reads every row into the ledger, then writes {@code writesPerSecond} over one writer per tenant and reads. */
    public TenantSimulator start(int writesPerSecond, int readsPerSecond, long seed) throws SQLException {
        TenantStores.postgres(session, table).forEach((k, seq) -> add(k, new Row(seq)));
        threads = Executors.newScheduledThreadPool(tenants + 2, r -> {
            Thread t = new Thread(r, "tenant-simulator");
            t.setDaemon(true);
            return t;
        });
        long period = 1_000_000L * tenants / writesPerSecond;
        for (int t = 1; t <= tenants; t++) {
            Writer w = new Writer(t, new Random(seed + t));
            writers.add(w);
            threads.scheduleAtFixedRate(w, period, period, TimeUnit.MICROSECONDS);
        }
        long readPeriod = 1_000_000L * 2 / readsPerSecond;
        for (int r = 0; r < 2; r++) {
            Random random = new Random(seed + 100 + r);
            threads.scheduleAtFixedRate(() -> readOne(random), readPeriod, readPeriod, TimeUnit.MICROSECONDS);
        }
        return this;
    }

    public WriteGuard guard() {
        return guard;
    }

    /** The write latencies of {@code tenants} since the last call for each, in microseconds. */
    public long[] drainLatencies(List<Integer> tenants) {
        List<long[]> parts = new ArrayList<>();
        for (int t : tenants)
            parts.add(latencies.computeIfAbsent(t, x -> new Latencies()).drain());
        return parts.stream().flatMapToLong(java.util.Arrays::stream).toArray();
    }

    public long acknowledged() {
        return acknowledged.get();
    }

    public long failed() {
        return failed.get();
    }

    public long reads() {
        return reads.get();
    }

    public List<String> staleReads() {
        synchronized (stale) {
            return List.copyOf(stale);
        }
    }

    public List<String> errors() {
        return errors.list();
    }

    /**
     * Every row the ledger knows, in the store {@code storeOf} names for its tenant: its seq (every acknowledged
     * write applied once), or no row where it was deleted. @return the first 20 problems
     */
    public List<String> check(IntFunction<Target> storeOf) throws SQLException {
        Map<String, Long> postgres = TenantStores.postgres(session, table);
        Map<String, Long> items = TenantStores.dynamo(dynamo, targetTable);
        List<String> out = new ArrayList<>();
        rows.forEach((k, row) -> {
            if (row.unknown || out.size() >= 20) return;
            int tenant = Integer.parseInt(k.substring(0, k.indexOf(':')));
            Target where = storeOf.apply(tenant);
            Long found = (where == Target.POSTGRES ? postgres : items).get(k);
            if (row.deleted ? found != null : found == null || found != row.seq) {
                out.add(where + " holds " + k + " as " + (found == null ? "no row" : "seq " + found) + ", the ledger "
                        + (row.deleted ? "deleted it" : "has seq " + row.seq));
            }
        });
        return out;
    }

    private void add(String key, Row row) {
        rows.put(key, row);
        synchronized (keys) {
            keys.add(key);
        }
    }

    static String key(int tenant, long id) {
        return tenant + ":" + id;
    }

    private void readOne(Random random) {
        String k;
        synchronized (keys) {
            if (keys.isEmpty()) return;
            k = keys.get(random.nextInt(keys.size()));
        }
        Row row = rows.get(k);
        boolean deleted = row.deleted;
        long seq = row.seq;
        if (row.unknown || row.writing) return;
        int tenant = Integer.parseInt(k.substring(0, k.indexOf(':')));
        long id = Long.parseLong(k.substring(k.indexOf(':') + 1));
        try {
            Target where = router.readTarget(base, tenant);
            Long found = where == Target.POSTGRES ? readPostgres(tenant, id) : readDynamo(tenant, id);
            reads.incrementAndGet();
            boolean old = deleted ? found != null : found == null ? !row.deleted && !row.writing : found < seq;
            if (old) {
                synchronized (stale) {
                    if (stale.size() < 20)
                        stale.add(where + " read " + k + " as " + found + " after " + (deleted ? "its delete" : seq));
                }
            }
        } catch (Exception e) {
            errors.add("read of " + k + " failed: " + e);
        }
    }

    private Long readPostgres(int tenant, long id) throws SQLException {
        Connection c = readers.get();
        if (c == null || c.isClosed()) {
            c = session.open();
            readers.set(c);
            synchronized (readerConnections) {
                readerConnections.add(c);
            }
        }
        return TenantStores.seq(c, table, tenant, id);
    }

    private Long readDynamo(int tenant, long id) {
        return TenantStores.seq(dynamo, targetTable, dynamoKey(tenant, id));
    }

    private Map<String, AttributeValue> dynamoKey(int tenant, long id) {
        return codec.key(source.key().text(List.of(Integer.toString(tenant), Long.toString(id))));
    }

    /** One tenant's writer: its rows are written by it alone, one write at a time, on its own connection. */
    private final class Writer implements Runnable {
        private final int tenant;
        private final Random random;
        private final List<Long> live = new ArrayList<>();
        private Connection pg;

        Writer(int tenant, Random random) {
            this.tenant = tenant;
            this.random = random;
            rows.forEach((k, row) -> {
                if (k.startsWith(tenant + ":") && !row.deleted)
                    live.add(Long.parseLong(k.substring(k.indexOf(':') + 1)));
            });
        }

        @Override
        public void run() {
            double dice = random.nextDouble();
            boolean insert = live.isEmpty() || dice < 0.4;
            boolean delete = !insert && dice > 0.85;
            long id = insert ? nextId.incrementAndGet() : live.get(random.nextInt(live.size()));
            String k = key(tenant, id);
            Row row = insert ? new Row(0) : rows.get(k);
            row.writing = true;
            long started = System.nanoTime();
            try {
                guard.run(base, tenant, permit -> {
                    if (permit.target() == Target.POSTGRES) writePostgres(permit, id, insert, delete);
                    else writeDynamo(permit, id, insert, delete);
                });
                if (delete) {
                    row.deleted = true;
                    live.remove(Long.valueOf(id));
                } else {
                    row.seq++;
                    if (insert) {
                        add(k, row);
                        live.add(id);
                    }
                }
                acknowledged.incrementAndGet();
                latencies.computeIfAbsent(tenant, x -> new Latencies()).add((System.nanoTime() - started) / 1_000);
            } catch (Exception e) {
                failed.incrementAndGet();
                row.unknown = true; // it may have landed or not
                if (insert) add(k, row);
                live.remove(Long.valueOf(id)); // never written again: its state stays unknown
                errors.add("write of " + k + " failed: " + e);
                pg = StoreSeqs.closeQuietly(pg);
            } finally {
                row.writing = false;
            }
        }

        private void writePostgres(WritePermit permit, long id, boolean insert, boolean delete) throws SQLException {
            if (pg == null) {
                pg = session.open();
                pg.setAutoCommit(false);
            }
            String sql = insert
                    ? "INSERT INTO " + table + " (tenant_id, id, seq, created_at) VALUES (?, ?, 1, now())"
                    : delete
                            ? "DELETE FROM " + table + " WHERE tenant_id = ? AND id = ?"
                            : "UPDATE " + table + " SET seq = seq + 1 WHERE tenant_id = ? AND id = ?";
            try (PreparedStatement ps = pg.prepareStatement(sql)) {
                ps.setInt(1, tenant);
                ps.setLong(2, id);
                if (ps.executeUpdate() != 1) throw new SQLException("no row " + key(tenant, id));
                permit.commitPostgres(pg);
            } catch (SQLException | RuntimeException e) {
                pg.rollback();
                throw e;
            }
        }

        private void writeDynamo(WritePermit permit, long id, boolean insert, boolean delete) {
            Map<String, AttributeValue> key = dynamoKey(tenant, id);
            TransactWriteItem write;
            if (insert) {
                Map<String, String> text = Map.of(
                        "tenant_id",
                        Integer.toString(tenant),
                        "id",
                        Long.toString(id),
                        "seq",
                        "1",
                        "created_at",
                        TS.format(Instant.now()));
                List<ColumnSpec> cols = codec.columns();
                Object[] values = new Object[cols.size()];
                for (int i = 0; i < values.length; i++)
                    values[i] = text.get(cols.get(i).name());
                Map<String, AttributeValue> item = codec.encode(
                        new SourceRow(source.key().text(List.of(Integer.toString(tenant), Long.toString(id))), values));
                write = SeqWrites.insert(targetTable, item);
            } else if (delete) {
                write = SeqWrites.delete(targetTable, key);
            } else {
                write = SeqWrites.increment(targetTable, key);
            }
            permit.writeDynamo(dynamo, write);
        }
    }

    @Override
    public void close() {
        WriterThreads.stop(threads);
        for (Writer w : writers) w.pg = StoreSeqs.closeQuietly(w.pg);
        synchronized (readerConnections) {
            readerConnections.forEach(StoreSeqs::closeQuietly);
        }
        guard.close();
    }
}
