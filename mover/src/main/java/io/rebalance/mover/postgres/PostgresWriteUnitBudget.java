package io.rebalance.mover.postgres;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.core.coordinator.CoordinatorSchema;
import io.rebalance.mover.OnDemandRamp;
import io.rebalance.mover.WriteUnitBudget;
import io.rebalance.protocol.lease.PostgresLeaseStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The write-unit budget ({@link WriteUnitBudget}) in a row of the coordinator's {@link CoordinatorSchema#writeUnits}
 * table: the same fields as Redis's hash, as a json object, changed by the same rules as {@code write_units.lua}, each
 * operation one transaction that holds the row's lock and reads the database's clock. The lock orders the fleet's
 * reservations as the script's atomicity does in Redis; {@code WriteUnitBudgetIT} holds both to the same behaviour.
 */
public final class PostgresWriteUnitBudget implements WriteUnitBudget {
    private static final double INCREASE = 0.02;
    private static final double PROBE = 0.25;
    private static final double BETA = 0.85;
    private static final double COOL = 2_000_000;
    private static final double TAU = 5_000_000;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<Map<String, Double>> FIELDS = new TypeReference<>() {};

    private final PostgresLeaseStore.Sessions sessions;
    private final String table;
    private final String run;

    public PostgresWriteUnitBudget(PostgresLeaseStore.Sessions sessions, CoordinatorSchema schema, String run) {
        this.sessions = sessions;
        this.table = schema.writeUnits();
        this.run = run;
    }

    @Override
    public Snapshot setCeiling(long unitsPerSecond) {
        return snapshot(locked(b -> b.step("ceiling", unitsPerSecond, 0, false)));
    }

    @Override
    public void startCeiling(long unitsPerSecond) {
        locked(b -> b.step("ceiling", unitsPerSecond, 0, true));
    }

    @Override
    public Reservation take(long units) {
        List<Double> r = locked(b -> b.step("take", units, 0, false));
        return new Reservation(r.get(0).longValue(), r.get(1));
    }

    @Override
    public Snapshot report(double consumed, double correction, boolean throttled) {
        return snapshot(locked(b -> b.step("report", consumed, correction, throttled)));
    }

    /** Without the row's lock: a read changes nothing, so status and the keeper never wait behind the workers. */
    @Override
    public Snapshot read() {
        return snapshot(unlocked(b -> b.step("read", 0, 0, false)));
    }

    @Override
    public OnDemandRamp.State ramp() {
        return unlocked(b -> new OnDemandRamp.State(
                b.get("ramp_warm", 0), b.get("peak", 0), b.get("base", 0), (long) b.get("base_at", 0)));
    }

    @Override
    public void startRamp(double warm) {
        locked(b -> {
            if (b.has("ramp_warm")) return null;
            b.set("ramp_warm", warm);
            b.set("ramp_cap", warm);
            b.set("base_at", System.currentTimeMillis()); // the process's clock, as the Redis budget keeps it
            return null;
        });
    }

    @Override
    public void saveRamp(OnDemandRamp.State s, double cap) {
        locked(b -> {
            b.set("peak", s.peak());
            b.set("base", s.base());
            b.set("base_at", s.baseAtMs());
            b.set("ramp_cap", cap);
            return null;
        });
    }

    private interface Operation<T> {
        T apply(Fields b);
    }

    /** Runs {@code op} on the run's fields as they are now, in one statement, taking no lock and writing nothing. */
    private <T> T unlocked(Operation<T> op) {
        try (Connection c = sessions.autocommitted()) {
            return op.apply(fields(c, ""));
        } catch (SQLException | JsonProcessingException e) {
            throw new IllegalStateException("the write-unit budget in " + table + ": " + e.getMessage(), e);
        }
    }

    /** The run's fields (none when it has no row) and the database's clock; {@code lock} ends the row's query. */
    private Fields fields(Connection c, String lock) throws SQLException, JsonProcessingException {
        try (PreparedStatement ps = c.prepareStatement("SELECT (SELECT fields::text FROM " + table + " WHERE run = ?"
                + lock + "), (extract(epoch FROM clock_timestamp()) * 1000000)::float8")) {
            ps.setString(1, run);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                String json = rs.getString(1);
                return new Fields(
                        json == null ? new HashMap<>() : JSON.readValue(json, FIELDS), rs.getDouble(2), json != null);
            }
        }
    }

    /**
     * Runs {@code op} on the run's fields in one transaction holding the row's lock, and writes what it changed. The
     * lock is held over a read, the rules in Java and a write: about three round trips per reservation, which bounds
     * the fleet near a thousand reservations a second; a copy makes tens.
     */
    private <T> T locked(Operation<T> op) {
        try (Connection c = sessions.open()) {
            c.setAutoCommit(false);
            try {
                Fields b = fields(c, " FOR UPDATE");
                if (!b.found) { // the run's first operation: its row is made once, then locked like any other
                    try (PreparedStatement ps = c.prepareStatement(
                            "INSERT INTO " + table + " (run) VALUES (?) ON CONFLICT (run) DO NOTHING")) {
                        ps.setString(1, run);
                        ps.executeUpdate();
                    }
                    b = fields(c, " FOR UPDATE");
                }
                T out = op.apply(b);
                if (!b.changed.isEmpty()) {
                    try (PreparedStatement ps = c.prepareStatement(
                            "UPDATE " + table + " SET fields = fields || CAST(? AS jsonb) WHERE run = ?")) {
                        ps.setString(1, JSON.writeValueAsString(b.changed));
                        ps.setString(2, run);
                        ps.executeUpdate();
                    }
                }
                c.commit();
                return out;
            } catch (Exception e) {
                try {
                    c.rollback();
                } catch (SQLException r) {
                    e.addSuppressed(r); // the backend may be gone: what failed first is what to report
                }
                throw e;
            }
        } catch (SQLException | JsonProcessingException e) {
            throw new IllegalStateException("the write-unit budget in " + table + ": " + e.getMessage(), e);
        }
    }

    /** The budget's fields as read under the row's lock, what the step changes, and the database's time in µs. */
    private static final class Fields {
        final Map<String, Double> f;
        final Map<String, Double> changed = new HashMap<>();
        final double now;

        /** Whether the run had a row: the lock was taken. */
        final boolean found;

        Fields(Map<String, Double> f, double now, boolean found) {
            this.f = f;
            this.now = now;
            this.found = found;
        }

        boolean has(String k) {
            return f.get(k) != null;
        }

        double get(String k, double absent) {
            Double v = f.get(k);
            return v == null ? absent : v;
        }

        void set(String k, double v) {
            f.put(k, v);
            changed.put(k, v);
        }

        /**
         * One operation as {@code write_units.lua} makes it (its comments say why each rule is so): {@code take}
         * reserves {@code a} units; {@code report} adds {@code a} consumed, {@code d} the schedule's correction, and
         * throttling if {@code flag}; {@code ceiling} sets {@code a} units/s, unless one is set when {@code flag};
         * {@code read} changes nothing.
         */
        List<Double> step(String op, double a, double d, boolean flag) {
            double ceiling = get("ceiling", 0);
            double ramp = get("ramp_cap", 0);
            boolean fresh = false;
            if (op.equals("ceiling")) {
                if (flag && has("ceiling")) return List.of();
                fresh = ceiling <= 0;
                ceiling = a;
                set("ceiling", ceiling);
            }
            double cap = ceiling;
            if (ramp > 0 && ramp < cap) cap = ramp;
            double floor = Math.min(cap, Math.max(10, ceiling * 0.01));
            double since = get("since", now);
            double allowed = fresh ? cap : get("allowed", cap);
            double took = get("took", 0);
            double fast = ceiling * INCREASE;
            double dt = (now - since) / 1_000_000;
            if (fast <= 0) {
                allowed = cap;
            } else if (took <= 0 || (allowed < took && dt <= (took - allowed) / fast)) {
                allowed = allowed + fast * dt;
            } else {
                double probing = dt - Math.max(0, (took - allowed) / fast);
                allowed = Math.max(allowed, took) + fast * PROBE * probing;
            }
            allowed = Math.max(floor, Math.min(cap, allowed));

            if (op.equals("take")) {
                if (ceiling <= 0) return List.of(0.0, 0.0);
                double tat = Math.max(get("tat", now), now);
                double wait = tat - now;
                tat = tat + a / allowed * 1_000_000;
                set("allowed", allowed);
                set("since", now);
                set("tat", tat);
                return List.of(wait, allowed);
            }

            double sumAt = get("sum_at", now);
            double sumFrom = get("sum_from", now);
            double sum = get("sum", 0) * Math.exp(-(now - sumAt) / TAU);
            double throttles = get("throttles", 0);
            double cuts = get("cuts", 0);
            double consumed = get("consumed", 0);
            if (op.equals("report")) {
                sum += a;
                consumed += a;
                set("sum", sum);
                set("sum_at", now);
                set("consumed", consumed);
                if (!has("sum_from") && a > 0) set("sum_from", now);
                if (ceiling > 0 && has("tat")) set("tat", get("tat", now) + d / allowed * 1_000_000);
                if (flag) {
                    throttles++;
                    set("throttles", throttles);
                    if (ceiling > 0 && now - get("last_cut", 0) >= COOL) {
                        boolean known = sum > 0 && has("sum_from") && now - sumFrom >= TAU;
                        double r = known ? rate(sum, sumFrom) : 0;
                        allowed = known && r * 0.95 < allowed * BETA ? r * 0.95 : allowed * BETA;
                        allowed = Math.max(floor, allowed);
                        if (known) set("took", r);
                        cuts++;
                        set("allowed", allowed);
                        set("since", now);
                        set("last_cut", now);
                        set("cuts", cuts);
                    }
                }
            } else if (op.equals("ceiling")) {
                set("allowed", allowed);
                set("since", now);
            }
            return List.of(
                    ceiling,
                    ceiling > 0 ? allowed : 0,
                    sum > 0 ? rate(sum, sumFrom) : 0,
                    throttles,
                    cuts,
                    ramp,
                    consumed);
        }

        private double rate(double sum, double sumFrom) {
            double covers = (TAU / 1_000_000) * (1 - Math.exp(-(now - sumFrom + 1_000_000) / TAU));
            return sum / covers;
        }
    }

    private static Snapshot snapshot(List<Double> r) {
        if (r.isEmpty()) return Snapshot.NONE;
        return new Snapshot(
                r.get(0).longValue(),
                r.get(1),
                r.get(2),
                r.get(3).longValue(),
                r.get(4).longValue(),
                r.get(5),
                r.get(6));
    }
}
