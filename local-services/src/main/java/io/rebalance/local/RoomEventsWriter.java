package io.rebalance.local;

import io.rebalance.core.slot.Ulid;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * An application writing to a room_events table while it is migrated: random inserts (ids in the table's time
 * range, so they land in slots the backfill is copying), updates (now and then a jsonb over 4 KB, which Postgres
 * TOASTs), deletes, and transactions that update, delete and re-insert one id, at a steady rate from several
 * threads. Deterministic per seed in what each thread does, not in how the threads interleave.
 */
public final class RoomEventsWriter implements AutoCloseable {
    private final String jdbcUrl;
    private final String user;
    private final String password;
    private final String table;
    private final Instant end;
    private final int hours;
    private final List<String> ids = new ArrayList<>();
    private final AtomicLong writes = new AtomicLong();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private ScheduledExecutorService threads;

    public RoomEventsWriter(String jdbcUrl, String user, String password, String table, Instant end, int hours) {
        this.jdbcUrl = jdbcUrl;
        this.user = user;
        this.password = password;
        this.table = table;
        this.end = end;
        this.hours = hours;
    }

    /** Starts {@code threads} writers, together {@code perSecond} writes a second. */
    public RoomEventsWriter start(int threadCount, int perSecond, long seed) throws SQLException {
        try (Connection c = connect();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT id FROM " + table)) {
            while (rs.next()) ids.add(rs.getString(1));
        }
        threads = Executors.newScheduledThreadPool(threadCount, r -> {
            Thread t = new Thread(r, "room-events-writer");
            t.setDaemon(true);
            return t;
        });
        long periodMicros = 1_000_000L * threadCount / perSecond;
        for (int w = 0; w < threadCount; w++) {
            Worker worker = new Worker(new Random(seed * 1_000 + w));
            threads.scheduleAtFixedRate(
                    worker::writeOne, w * periodMicros / threadCount, periodMicros, TimeUnit.MICROSECONDS);
        }
        return this;
    }

    public long writes() {
        return writes.get();
    }

    /** Stops writing; every write that returned is committed. @throws IllegalStateException if a write failed */
    public void stop() throws InterruptedException {
        threads.shutdown();
        if (!threads.awaitTermination(30, TimeUnit.SECONDS)) throw new IllegalStateException("writers did not stop");
        if (failure.get() != null) throw new IllegalStateException("a write failed", failure.get());
    }

    @Override
    public void close() throws InterruptedException {
        if (threads != null && !threads.isShutdown()) stop();
    }

    private Connection connect() throws SQLException {
        return DriverManager.getConnection(jdbcUrl, user, password);
    }

    private final class Worker {
        private final Random random;
        private Connection connection;

        Worker(Random random) {
            this.random = random;
        }

        void writeOne() {
            try {
                if (connection == null) connection = connect();
                int dice = random.nextInt(100);
                if (dice < 35) insert(newId());
                else if (dice < 75) update(knownId());
                else if (dice < 95) delete(knownId());
                else deleteAndReinsert(knownId());
                writes.incrementAndGet();
            } catch (SQLException e) {
                failure.compareAndSet(null, e);
                throw new IllegalStateException(e); // stops this writer's schedule
            }
        }

        private String newId() {
            long from = end.toEpochMilli() - hours * 3_600_000L;
            long ms = from + (long) (random.nextDouble() * hours * 3_600_000L);
            String id = Ulid.of(ms, random.nextInt(1 << 16), random.nextLong());
            synchronized (ids) {
                ids.add(id);
            }
            return id;
        }

        private String knownId() {
            synchronized (ids) {
                return ids.get(random.nextInt(ids.size()));
            }
        }

        private void insert(String id) throws SQLException {
            try (PreparedStatement ps = connection.prepareStatement("INSERT INTO " + table
                    + " VALUES (?, gen_random_uuid(), 'message', ?::jsonb, now(), ?) ON CONFLICT (id) DO NOTHING")) {
                ps.setString(1, id);
                ps.setString(2, "{\"w\":" + random.nextInt(1000) + "}");
                ps.setLong(3, random.nextInt(1_000_000));
                ps.executeUpdate();
            }
        }

        /** Half the updates leave data alone: a TOASTed value then arrives in the stream as a placeholder. */
        private void update(String id) throws SQLException {
            if (random.nextBoolean()) {
                try (PreparedStatement ps = connection.prepareStatement(
                        "UPDATE " + table + " SET kind = 'reaction', seq = seq + 1 WHERE id = ?")) {
                    ps.setString(1, id);
                    ps.executeUpdate();
                }
                return;
            }
            String data = random.nextInt(10) == 0
                    ? "{\"big\":\"" + letters(6_000) + "\"}"
                    : "{\"edit\":" + random.nextInt(1000) + "}";
            try (PreparedStatement ps = connection.prepareStatement(
                    "UPDATE " + table + " SET kind = 'edit', data = ?::jsonb, seq = seq + 1 WHERE id = ?")) {
                ps.setString(1, data);
                ps.setString(2, id);
                ps.executeUpdate();
            }
        }

        /** Random letters do not compress, so Postgres stores them out of line (TOAST). */
        private String letters(int n) {
            StringBuilder b = new StringBuilder(n);
            for (int i = 0; i < n; i++) b.append((char) ('a' + random.nextInt(26)));
            return b.toString();
        }

        private void delete(String id) throws SQLException {
            try (PreparedStatement ps = connection.prepareStatement("DELETE FROM " + table + " WHERE id = ?")) {
                ps.setString(1, id);
                ps.executeUpdate();
            }
        }

        private void deleteAndReinsert(String id) throws SQLException {
            connection.setAutoCommit(false);
            try {
                update(id);
                delete(id);
                insert(id);
                connection.commit();
            } catch (SQLException e) {
                connection.rollback();
                throw e;
            } finally {
                connection.setAutoCommit(true);
            }
        }
    }
}
