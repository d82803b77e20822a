package io.rebalance.cdc;

import io.rebalance.core.redis.SampleLog;
import io.rebalance.core.refused.RefusedRows;
import io.rebalance.core.source.SourceSession;
import io.rebalance.protocol.HashFields;
import io.rebalance.protocol.handoff.Lsn;
import io.rebalance.protocol.keyspace.TailKeys;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import redis.clients.jedis.UnifiedJedis;

/**
 * The tail's status, the one class that knows its fields: the active tail publishes it once a second to {@code <prefix>{cdc}:status}, for {@code rebalance status}, verify's
 * in-flight wait and cutover: the LSN applied, lag in ms (the age of the oldest change delivered and not yet applied,
 * 0 when none waits) and in bytes (WAL written but not yet confirmed by the slot), events/s, the refused rows, and
 * the slot's health: how much WAL it holds back (with a warning flag past {@code tail.retentionWarnMb}), its
 * {@code wal_status} and how much more WAL it may fall behind before Postgres invalidates it
 * ({@code safe_wal_size}, empty when {@code max_slot_wal_keep_size} is unlimited). Others {@link #read} it.
 */
public final class TailStatus {
    /** A tail that has not published for this long is not running (it publishes every second). */
    public static final long RUNNING_WITHIN_MS = 5_000;

    /** The integer fields; the rest are text but for {@code events_per_sec} and {@code retention_warning}. */
    private static final Set<String> INTEGERS = Set.of(
            "updated_ms",
            "events",
            "lag_ms",
            "last_applied_ms",
            "reconcile_pending",
            "reconciled",
            "apply_retries",
            "commit_waits",
            "skipped_while_held",
            "bypassed_while_held",
            "stream_restarts",
            "lease_lapses",
            "refused",
            "lag_bytes",
            "retained_bytes",
            "safe_wal_bytes");

    /**
     * The status as last published, and who holds the tail's lease now.
     *
     * @param fields the hash as Redis holds it (all text); empty when no tail has published
     * @param leaseHolder the lease's member, or null when nobody holds it
     */
    public record Report(Map<String, String> fields, String leaseHolder) {
        /** A tail runs: one holds the lease and the status was published within {@link #RUNNING_WITHIN_MS}. */
        public boolean running(long now) {
            long updated = updatedMs();
            return leaseHolder != null && updated > 0 && now - updated < RUNNING_WITHIN_MS;
        }

        public long updatedMs() {
            return HashFields.number(fields, "updated_ms", 0);
        }

        /** The age of the oldest change delivered and not yet applied, 0 when none waits. */
        public long lagMs() {
            return HashFields.number(fields, "lag_ms", 0);
        }

        /** Keys written while their slot's backfill could still overwrite them, not yet reconciled. */
        public long reconcilePending() {
            return HashFields.number(fields, "reconcile_pending", 0);
        }

        /** The WAL position every change before which is in DynamoDB; 0 before the first batch. */
        public long appliedLsn() {
            String lsn = fields.getOrDefault("applied_lsn", "");
            return lsn.isEmpty() ? 0 : Lsn.parse(lsn);
        }

        /** Every field as JSON types it (docs/cli.md documents each). */
        public Map<String, Object> typed() {
            Map<String, Object> t = new LinkedHashMap<>();
            fields.forEach((field, value) -> t.put(field, typed(field, value)));
            return t;
        }

        private static Object typed(String field, String value) {
            if (INTEGERS.contains(field)) return value.isEmpty() ? null : Long.parseLong(value);
            if (field.equals("events_per_sec")) return Double.parseDouble(value);
            if (field.equals("retention_warning")) return Boolean.parseBoolean(value);
            return value;
        }
    }

    /** Reads the status and the lease holder. */
    public static Report read(UnifiedJedis redis, TailKeys keys) {
        return new Report(redis.hgetAll(keys.status()), redis.get(keys.lease()));
    }

    private final UnifiedJedis redis;
    private final TailKeys keys;
    private final SourceSession session;
    private final String slotName;
    private final long retentionWarnBytes;
    private final TailStats stats;
    private final String owner;
    private final RefusedRows refused;
    private final SampleLog history;
    private final TailMembers members;
    private Connection connection;
    private long lastEvents;
    private long lastAt;

    TailStatus(
            UnifiedJedis redis,
            TailKeys keys,
            SourceSession session,
            String slotName,
            long retentionWarnMb,
            TailStats stats,
            String owner,
            RefusedRows refused) {
        this.refused = refused;
        this.redis = redis;
        this.keys = keys;
        this.session = session;
        this.slotName = slotName;
        this.retentionWarnBytes = retentionWarnMb * 1024 * 1024;
        this.stats = stats;
        this.owner = owner;
        this.history = new SampleLog(redis, keys.history());
        this.members = new TailMembers(redis, keys);
    }

    void publish(long pendingReconcile) {
        long now = System.currentTimeMillis();
        stats.lastTickMs.set(now);
        long events = stats.events();
        double rate = lastAt == 0 ? 0 : (events - lastEvents) * 1000.0 / Math.max(1, now - lastAt);
        lastEvents = events;
        lastAt = now;
        Map<String, String> f = new LinkedHashMap<>();
        f.put("owner", owner);
        f.put("updated_ms", Long.toString(now));
        members.seen(owner);
        f.put("events", Long.toString(events));
        f.put("events_per_sec", String.format(Locale.ROOT, "%.1f", rate));
        long applied = stats.appliedLsn();
        f.put("applied_lsn", applied == 0 ? "" : Lsn.text(applied));
        f.put("lag_ms", Long.toString(stats.lagMs(now)));
        f.put("last_applied_ms", Long.toString(stats.lastAppliedMs.get()));
        f.put("reconcile_pending", Long.toString(pendingReconcile));
        f.put("reconciled", Long.toString(stats.reconciled()));
        f.put("apply_retries", Long.toString(stats.applyRetries()));
        f.put("commit_waits", Long.toString(stats.commitWaits()));
        f.put("skipped_while_held", Long.toString(stats.skippedWhileHeld()));
        f.put("bypassed_while_held", Long.toString(stats.bypassedWhileHeld()));
        f.put("stream_restarts", Long.toString(stats.restarts()));
        f.put("lease_lapses", Long.toString(stats.leaseLapses()));
        f.put("refused", Long.toString(refused.count()));
        long truncated = stats.truncatedLsn.get();
        if (truncated != 0) f.put("truncated_lsn", Lsn.text(truncated)); // kept in the hash once seen (hset merges)
        try {
            slotPositions(f);
        } catch (SQLException e) {
            f.put(
                    "source_error",
                    e.getMessage() == null
                            ? e.toString()
                            : e.getMessage().lines().findFirst().orElse(""));
            close();
        }
        redis.hset(keys.status(), f);
        history.append(now, stats.lagMs(now), stats.retainedWalBytes()); // the dashboard's charts of the last hour
    }

    private void slotPositions(Map<String, String> f) throws SQLException {
        if (connection == null || connection.isClosed()) connection = session.open();
        try (PreparedStatement ps = connection.prepareStatement("SELECT pg_current_wal_lsn()::text,"
                + " confirmed_flush_lsn::text, (pg_current_wal_lsn() - confirmed_flush_lsn)::int8,"
                + " (pg_current_wal_lsn() - restart_lsn)::int8, wal_status, safe_wal_size FROM pg_replication_slots"
                + " WHERE slot_name = ?")) {
            ps.setString(1, slotName);
            ps.setQueryTimeout(5); // a hung source must not stop the publishing (and the liveness it proves)
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    f.put("slot", "missing");
                    return;
                }
                f.put("slot", "present");
                f.put("source_lsn", rs.getString(1));
                f.put("confirmed_lsn", String.valueOf(rs.getString(2)));
                f.put("lag_bytes", Long.toString(rs.getLong(3)));
                long retained = rs.getLong(4);
                stats.retainedWalBytes.set(retained);
                f.put("retained_bytes", Long.toString(retained));
                f.put("retention_warning", Boolean.toString(retained > retentionWarnBytes));
                f.put("wal_status", String.valueOf(rs.getString(5)));
                long safe = rs.getLong(6);
                f.put("safe_wal_bytes", rs.wasNull() ? "" : Long.toString(safe));
                f.remove("source_error");
                redis.hdel(keys.status(), "source_error");
            }
        }
    }

    void close() {
        try {
            if (connection != null) connection.close();
        } catch (SQLException ignored) {
            // discarded
        }
        connection = null;
    }
}
