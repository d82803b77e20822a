package io.rebalance.mover.postgres;

import io.rebalance.core.coordinator.CoordinatorSchema;
import io.rebalance.core.retry.Retrier;
import io.rebalance.core.slot.Slot;
import io.rebalance.mover.SlotStore;
import io.rebalance.protocol.lease.OwnedLease;
import io.rebalance.protocol.lease.PostgresLeaseStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A slot's lease and state as one row of the coordinator's {@code slots} table ({@link CoordinatorSchema#slots}),
 * named {@code <run>/<slot>}: the lease is {@link PostgresLeaseStore}'s columns of that row, and every change of the
 * state is one statement that checks the lease in its {@code WHERE}, in the database's time. Workers claim the next
 * slot with one statement ({@link #claimNext}), as a queue would: {@code FOR UPDATE SKIP LOCKED} over the partial index
 * of claimable rows, the claim's token one above the row's last. States do not expire: the table is durable, and a
 * slot's row is kept until the run is reset.
 */
public final class PostgresSlotStore implements SlotStore {
    private final PostgresLeaseStore.Sessions sessions;
    private final PostgresLeaseStore leases;
    private final String table;
    private final String run;
    private final Duration leaseTtl;
    private final Retrier retrier;

    /** @param run names this run's rows apart from other runs' in the same schema (no {@code /}) */
    public PostgresSlotStore(
            PostgresLeaseStore.Sessions sessions,
            CoordinatorSchema schema,
            String run,
            Retrier retrier,
            Duration leaseTtl) {
        if (run.contains("/")) throw new IllegalArgumentException("a run's name has no '/': " + run);
        this.sessions = sessions;
        this.table = schema.slots();
        this.leases = new PostgresLeaseStore(sessions, table);
        this.run = run;
        this.leaseTtl = leaseTtl;
        this.retrier = retrier;
    }

    private String name(Slot slot) {
        return run + "/" + slot.name();
    }

    /** Adds the run's slots that have no row yet, as PENDING and free: the queue {@link #claimNext} takes from. */
    public void plan(List<Slot> slots) {
        retrier.run("plan " + slots.size() + " slots", () -> {
            try (Connection c = sessions.autocommitted();
                    PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + " (name, owner, token,"
                            + " lease_until) SELECT n, '', 0, '-infinity' FROM unnest(CAST(? AS text[])) n ON CONFLICT"
                            + " (name) DO NOTHING")) {
                ps.setArray(
                        1,
                        c.createArrayOf("text", slots.stream().map(this::name).toArray()));
                ps.executeUpdate();
            }
        });
    }

    /**
     * Claims the newest claimable slot of the run (not FINISHED, its lease free; the no-time slot last) for {@code
     * owner}, in one statement: rows other workers are claiming at that moment are skipped, not waited for. A reply
     * lost after the claim committed leaves that slot held until its lease lapses, and the retry claims another.
     *
     * @return the slot and its acquisition, or empty when none is claimable now
     */
    public Optional<Claimed> claimNext(String owner) {
        return claimNext(owner, Set.of());
    }

    /** As {@link #claimNext(String)}, never one of {@code except} (slots the process holds or lets rest). */
    public Optional<Claimed> claimNext(String owner, Set<Slot> except) {
        if (owner.contains("#")) throw new IllegalArgumentException("a lease owner has no '#': " + owner);
        return retrier.call("claim a slot", () -> {
            long at = System.nanoTime();
            try (Connection c = sessions.autocommitted();
                    PreparedStatement ps = c.prepareStatement("UPDATE " + table + " s SET owner = ?, token = s.token"
                            + " + 1, lease_until = clock_timestamp() + ? * interval '1 millisecond' WHERE s.name = ("
                            + "SELECT name FROM " + table + " WHERE name > ? AND name < ? AND status <> 'FINISHED' AND"
                            + " lease_until <= clock_timestamp() AND name <> ALL (CAST(? AS text[])) ORDER BY name = ?,"
                            + " name DESC LIMIT 1 FOR UPDATE SKIP LOCKED)"
                            + " RETURNING s.name, s.owner || '#' || s.token, s.last_id, s.rows")) {
                ps.setString(1, owner);
                ps.setLong(2, leaseTtl.toMillis());
                bindRun(ps, 3);
                ps.setObject(5, except.stream().map(this::name).toArray(String[]::new));
                ps.setString(6, name(Slot.NO_TIME)); // newest hour first, and the slot of rows without a time last
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) return Optional.<Claimed>empty();
                    Slot slot = Slot.parse(rs.getString(1).substring(run.length() + 1));
                    String member = rs.getString(2);
                    OwnedLease lease = OwnedLease.granted(leases, rs.getString(1), member, leaseTtl, at);
                    return Optional.of(new Claimed(
                            slot,
                            new Acquire(Acquire.Kind.ACQUIRED, member, 0, rs.getString(3), rs.getLong(4), lease)));
                }
            }
        });
    }

    /**
     * How long until the earliest lease of the run's unfinished slots, other than {@code except}, ends: when {@link
     * #claimNext} found nothing, the next claim can succeed then. @return empty when no such slot is leased
     */
    public Optional<Duration> untilLeaseEnds(Set<Slot> except) {
        return retrier.call("read the next lease's end", () -> {
            try (Connection c = sessions.autocommitted();
                    PreparedStatement ps = c.prepareStatement("SELECT ceil(extract(epoch FROM min(lease_until) -"
                            + " clock_timestamp()) * 1000)::bigint FROM " + table + " WHERE name > ? AND name < ? AND"
                            + " status <> 'FINISHED' AND lease_until > clock_timestamp() AND name <> ALL (CAST(? AS"
                            + " text[]))")) {
                bindRun(ps, 1);
                ps.setObject(3, except.stream().map(this::name).toArray(String[]::new));
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    long ms = rs.getLong(1);
                    return rs.wasNull() ? Optional.<Duration>empty() : Optional.of(Duration.ofMillis(Math.max(0, ms)));
                }
            }
        });
    }

    /** Binds {@code name > ? AND name < ?} at {@code at}: every slot name of this run sorts between the two. */
    private void bindRun(PreparedStatement ps, int at) throws SQLException {
        ps.setString(at, run + "/");
        ps.setString(at + 1, run + "0"); // '0' follows '/'
    }

    /** A slot {@link #claimNext} took, and its acquisition. */
    public record Claimed(Slot slot, Acquire acquire) {}

    @Override
    public Acquire acquire(Slot slot, String owner) {
        return SlotStore.acquire(this, retrier, leases, name(slot), slot, owner, leaseTtl);
    }

    @Override
    public String save(Slot slot, String member, String lastId, long rows, String status) {
        // FINISHED gives the lease up in the same statement; progress extends it, as the Redis script does
        return underLease(
                "save progress of slot " + slot,
                slot,
                member,
                "last_id = ?, rows = rows + ?, status = ?, saved_by = ?, error = NULL, updated_at = clock_timestamp(),"
                        + " lease_until ="
                        + " CASE WHEN ? = 'FINISHED' THEN '-infinity' ELSE clock_timestamp() + ? * interval"
                        + " '1 millisecond' END",
                List.of(lastId, rows, status, member, status, leaseTtl.toMillis()));
    }

    @Override
    public void recordError(Slot slot, String member, String message) {
        underLease("record error of slot " + slot, slot, member, "error = ?", List.of(message));
    }

    /** Updates the row only while {@code member} holds its lease. @return null when updated, else the holder now */
    private String underLease(String what, Slot slot, String member, String set, List<Object> values) {
        return retrier.call(what, () -> {
            try (Connection c = sessions.autocommitted();
                    PreparedStatement ps = c.prepareStatement("UPDATE " + table + " SET " + set + " WHERE name = ?"
                            + " AND owner || '#' || token = ? AND lease_until > clock_timestamp() RETURNING 1")) {
                int p = 1;
                for (Object v : values) ps.setObject(p++, v);
                ps.setString(p++, name(slot));
                ps.setString(p, member);
                try (ResultSet rs = ps.executeQuery()) {
                    if (rs.next()) return null;
                }
            }
            String holder = leases.holder(name(slot));
            return holder == null ? "" : holder;
        });
    }

    @Override
    public void release(Slot slot, String owner) {
        SlotStore.release(retrier, leases, name(slot), slot, owner);
    }

    @Override
    public void releaseCompacted(Slot slot, OwnedLease lease) {
        retrier.run("release compacted slot " + slot, lease::release);
    }

    /** As Redis's state hash: nothing for a slot never saved, only {@code error} for one whose first step failed. */
    @Override
    public Map<String, String> state(Slot slot) {
        return retrier.call("read state of slot " + slot, () -> {
            try (Connection c = sessions.autocommitted();
                    PreparedStatement ps = c.prepareStatement("SELECT status, last_id, rows, saved_by, error,"
                            + " (extract(epoch FROM updated_at) * 1000)::int8 FROM " + table + " WHERE name = ?")) {
                ps.setString(1, name(slot));
                try (ResultSet rs = ps.executeQuery()) {
                    Map<String, String> out = new HashMap<>();
                    if (!rs.next()) return out;
                    if (rs.getString(5) != null) out.put("error", rs.getString(5));
                    if ("PENDING".equals(rs.getString(1))) return out;
                    out.put("status", rs.getString(1));
                    out.put("last_id", rs.getString(2));
                    out.put("rows", Long.toString(rs.getLong(3)));
                    out.put("owner", rs.getString(4));
                    if (rs.getString(6) != null) out.put("updated_ms", rs.getString(6));
                    return out;
                }
            }
        });
    }

    /**
     * Keeps their rows: a FINISHED row has left the index of claimable slots, and a row deleted would be planned
     * again by a process joining the run, as PENDING with its token from zero.
     */
    @Override
    public void forget(List<Slot> compacted) {}

    /** One query for every slot: its row's status, and whether its lease is held now in the database's time. */
    @Override
    public List<Copy> copies(List<Slot> slots) {
        return retrier.call("read the copy of " + slots.size() + " slots", () -> {
            try (Connection c = sessions.autocommitted();
                    PreparedStatement ps = c.prepareStatement("SELECT s.status, s.lease_until > clock_timestamp() FROM"
                            + " unnest(CAST(? AS text[])) WITH ORDINALITY AS n(name, ord) LEFT JOIN " + table
                            + " s ON s.name = n.name ORDER BY n.ord")) {
                ps.setArray(
                        1,
                        c.createArrayOf("text", slots.stream().map(this::name).toArray()));
                List<Copy> out = new ArrayList<>(slots.size());
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        out.add(
                                "FINISHED".equals(rs.getString(1))
                                        ? Copy.FINISHED
                                        : rs.getBoolean(2) ? Copy.LEASED : Copy.WAITING);
                    }
                }
                return out;
            }
        });
    }

    @Override
    public String leaseHolder(Slot slot) {
        return retrier.call("read lease of slot " + slot, () -> leases.holder(name(slot)));
    }
}
