package io.rebalance.mover.postgres;

import io.rebalance.core.coordinator.CoordinatorSchema;
import io.rebalance.core.copy.CopyStatus;
import io.rebalance.core.copy.RunPlan;
import io.rebalance.core.copy.RunStatus;
import io.rebalance.core.retry.Retrier;
import io.rebalance.core.slot.Slot;
import io.rebalance.mover.RunState;
import io.rebalance.protocol.lease.PostgresLeaseStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The run's state in the coordinator's tables ({@link RunState}): one row of {@link CoordinatorSchema#runs} per run,
 * a row per copy process in {@link CoordinatorSchema#processes} stamped with the database's clock, and event lines in
 * {@link CoordinatorSchema#events}. Every statement is its own transaction, retried with backoff; a field never set
 * reads as Redis's absent key does. The counters are one row every worker adds to: a row lock held for one statement
 * per batch, tens a second in a copy.
 */
public final class PostgresRunState implements RunState {
    private static final int EVENTS_KEPT = 1000;
    private static final String NOW_MS = "(extract(epoch FROM clock_timestamp()) * 1000)::int8";

    private final PostgresLeaseStore.Sessions sessions;
    private final CoordinatorSchema schema;
    private final String run;
    private final Retrier retrier;

    /** @param run names this run's rows apart from other runs' in the same schema (no {@code /}) */
    public PostgresRunState(
            PostgresLeaseStore.Sessions sessions, CoordinatorSchema schema, String run, Retrier retrier) {
        if (run.contains("/")) throw new IllegalArgumentException("a run's name has no '/': " + run);
        this.sessions = sessions;
        this.schema = schema;
        this.run = run;
        this.retrier = retrier;
    }

    @Override
    public String name() {
        return run;
    }

    @Override
    public RunStatus status() {
        return RunStatus.parse(field("read run status", "status"));
    }

    @Override
    public void setStatus(RunStatus s) {
        set("set run status " + s, "status", s.name());
    }

    @Override
    public RunStatus compareAndSet(RunStatus from, RunStatus to) {
        // the row is made first, so the update below always finds it and its lock orders concurrent changes
        return retrier.call("change run status " + from + " -> " + to, () -> {
            try (Connection c = sessions.autocommitted()) {
                ensureRow(c);
                try (PreparedStatement ps = c.prepareStatement("UPDATE " + schema.runs() + " SET status = CASE WHEN"
                        + " coalesce(status, 'NOT_STARTED') = ? THEN ? ELSE status END WHERE run = ? RETURNING"
                        + " status")) {
                    ps.setString(1, from.name());
                    ps.setString(2, to.name());
                    ps.setString(3, run);
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        return RunStatus.parse(rs.getString(1));
                    }
                }
            }
        });
    }

    @Override
    public RunPlan claimPlan(RunPlan plan) {
        return retrier.call("store run plan", () -> {
            try (Connection c = sessions.autocommitted();
                    PreparedStatement ps = c.prepareStatement("INSERT INTO " + schema.runs() + " (run, plan) VALUES"
                            + " (?, ?) ON CONFLICT (run) DO UPDATE SET plan = coalesce(" + schema.runs()
                            + ".plan, EXCLUDED.plan) RETURNING plan")) {
                ps.setString(1, run);
                ps.setString(2, plan.toJson());
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return RunPlan.fromJson(rs.getString(1));
                }
            }
        });
    }

    @Override
    public void replacePlan(RunPlan plan) {
        set("store run plan", "plan", plan.toJson());
    }

    @Override
    public RunPlan plan() {
        String json = field("read run plan", "plan");
        return json == null ? null : RunPlan.fromJson(json);
    }

    @Override
    public Slot watermark() {
        String s = field("read watermark", "watermark");
        return s == null ? null : Slot.parse(s);
    }

    @Override
    public void setWatermark(Slot slot) {
        set("set watermark", "watermark", slot.name());
    }

    @Override
    public long rateLimit() {
        return count("read rate limit", "rate_limit");
    }

    @Override
    public void setRateLimit(long rowsPerSecond) {
        set("set rate limit", "rate_limit", rowsPerSecond);
    }

    @Override
    public void addRowsCopied(long n) {
        add("count rows copied", "rows_copied", n);
    }

    @Override
    public long rowsCopied() {
        return count("read rows copied", "rows_copied");
    }

    @Override
    public void restoreCounts(long rows, long slots) {
        update(
                "restore counts",
                "INSERT INTO " + schema.runs() + " (run, rows_copied,"
                        + " slots_finished) VALUES (?, ?, ?) ON CONFLICT (run) DO UPDATE SET rows_copied ="
                        + " EXCLUDED.rows_copied, slots_finished = EXCLUDED.slots_finished",
                run,
                rows,
                slots);
    }

    @Override
    public void slotFinished() {
        add("count finished slot", "slots_finished", 1);
    }

    @Override
    public long slotsFinished() {
        return count("read finished slots", "slots_finished");
    }

    @Override
    public void event(String line) {
        try (Connection c = sessions.autocommitted();
                PreparedStatement add = c.prepareStatement(
                        "INSERT INTO " + schema.events() + " (run, at_ms, line) VALUES (?, " + NOW_MS + ", ?)");
                PreparedStatement trim = c.prepareStatement("DELETE FROM " + schema.events() + " WHERE run = ? AND id"
                        + " <= (SELECT id FROM " + schema.events() + " WHERE run = ? ORDER BY id DESC OFFSET ? LIMIT"
                        + " 1)")) {
            add.setString(1, run);
            add.setString(2, line);
            add.executeUpdate();
            trim.setString(1, run);
            trim.setString(2, run);
            trim.setInt(3, EVENTS_KEPT);
            trim.executeUpdate();
        } catch (Exception e) {
            // Losing an event line must not fail a slot.
        }
    }

    @Override
    public List<String> events(int n) {
        return strings(
                "read events",
                "SELECT at_ms || ' ' || line FROM " + schema.events() + " WHERE run = ? ORDER BY id DESC LIMIT ?",
                run,
                n);
    }

    @Override
    public void heartbeat(String processId, String infoJson) {
        update(
                "heartbeat",
                "INSERT INTO " + schema.processes() + " (run, id,"
                        + " seen_at, info) VALUES (?, ?, clock_timestamp(), ?) ON CONFLICT (run, id) DO UPDATE SET"
                        + " seen_at = EXCLUDED.seen_at, info = EXCLUDED.info",
                run,
                processId,
                infoJson);
    }

    @Override
    public void leave(String processId) {
        update("deregister process", "DELETE FROM " + schema.processes() + " WHERE run = ? AND id = ?", run, processId);
    }

    /** The run's slot rows whose lease has not lapsed by the database's clock, by name. */
    @Override
    public List<String> heldSlotLeases() {
        return strings(
                "list slot leases",
                "SELECT name FROM " + schema.slots() + " WHERE name > ?"
                        + " AND name < ? AND lease_until > clock_timestamp() ORDER BY name",
                run + "/",
                run + "0"); // '0' follows '/': every name of this run sorts between the two
    }

    @Override
    public Map<String, String> liveProcesses(long maxAgeMs) {
        return retrier.call("list processes", () -> {
            try (Connection c = sessions.autocommitted();
                    PreparedStatement ps = c.prepareStatement("SELECT id, info FROM " + schema.processes() + " WHERE"
                            + " run = ? AND seen_at >= clock_timestamp() - ? * interval '1 millisecond'")) {
                ps.setString(1, run);
                ps.setLong(2, maxAgeMs);
                Map<String, String> out = new TreeMap<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) out.put(rs.getString(1), rs.getString(2));
                }
                return out;
            }
        });
    }

    @Override
    public void pruneProcesses(long maxAgeMs) {
        update(
                "prune processes",
                "DELETE FROM " + schema.processes() + " WHERE run = ?"
                        + " AND seen_at < clock_timestamp() - ? * interval '1 millisecond'",
                run,
                maxAgeMs);
    }

    @Override
    public void writeProgress(CopyStatus progress) {
        Map<String, String> fields = progress.fields();
        retrier.run("write progress", () -> {
            try (Connection c = sessions.autocommitted();
                    PreparedStatement ps = c.prepareStatement("INSERT INTO " + schema.runs() + " (run, progress) VALUES"
                            + " (?, jsonb_object(CAST(? AS text[]), CAST(? AS text[]))) ON CONFLICT (run) DO UPDATE SET"
                            + " progress = " + schema.runs() + ".progress || EXCLUDED.progress")) {
                ps.setString(1, run);
                ps.setArray(2, c.createArrayOf("text", fields.keySet().toArray()));
                ps.setArray(3, c.createArrayOf("text", fields.values().toArray()));
                ps.executeUpdate();
            }
        });
    }

    @Override
    public CopyStatus progress() {
        return CopyStatus.of(retrier.call("read progress", () -> {
            try (Connection c = sessions.autocommitted();
                    PreparedStatement ps = c.prepareStatement("SELECT p.key, p.value FROM " + schema.runs() + " r,"
                            + " jsonb_each_text(r.progress) p WHERE r.run = ?")) {
                ps.setString(1, run);
                Map<String, String> out = new HashMap<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) out.put(rs.getString(1), rs.getString(2));
                }
                return out;
            }
        }));
    }

    private void ensureRow(Connection c) throws Exception {
        try (PreparedStatement ps =
                c.prepareStatement("INSERT INTO " + schema.runs() + " (run) VALUES (?) ON CONFLICT (run) DO NOTHING")) {
            ps.setString(1, run);
            ps.executeUpdate();
        }
    }

    /** One statement, its own transaction, retried. */
    private void update(String what, String sql, Object... args) {
        retrier.run(what, () -> {
            try (Connection c = sessions.autocommitted();
                    PreparedStatement ps = c.prepareStatement(sql)) {
                for (int i = 0; i < args.length; i++) ps.setObject(i + 1, args[i]);
                ps.executeUpdate();
            }
        });
    }

    /** The first column of every row a query returns, retried. */
    private List<String> strings(String what, String sql, Object... args) {
        return retrier.call(what, () -> {
            try (Connection c = sessions.autocommitted();
                    PreparedStatement ps = c.prepareStatement(sql)) {
                for (int i = 0; i < args.length; i++) ps.setObject(i + 1, args[i]);
                List<String> out = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) out.add(rs.getString(1));
                }
                return out;
            }
        });
    }

    /** @param column a column of the runs table, named by this class only */
    private String field(String what, String column) {
        return retrier.call(what, () -> {
            try (Connection c = sessions.autocommitted();
                    PreparedStatement ps =
                            c.prepareStatement("SELECT " + column + " FROM " + schema.runs() + " WHERE run = ?")) {
                ps.setString(1, run);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? rs.getString(1) : null;
                }
            }
        });
    }

    private long count(String what, String column) {
        String s = field(what, column);
        return s == null ? 0 : Long.parseLong(s);
    }

    private void set(String what, String column, Object value) {
        retrier.run(what, () -> {
            try (Connection c = sessions.autocommitted();
                    PreparedStatement ps = c.prepareStatement("INSERT INTO " + schema.runs() + " (run, " + column
                            + ") VALUES (?, ?) ON CONFLICT (run) DO UPDATE SET " + column + " = EXCLUDED." + column)) {
                ps.setString(1, run);
                ps.setObject(2, value);
                ps.executeUpdate();
            }
        });
    }

    private void add(String what, String column, long n) {
        retrier.run(what, () -> {
            try (Connection c = sessions.autocommitted();
                    PreparedStatement ps = c.prepareStatement("INSERT INTO " + schema.runs() + " (run, " + column
                            + ") VALUES (?, ?) ON CONFLICT (run) DO UPDATE SET " + column + " = " + schema.runs() + "."
                            + column + " + EXCLUDED." + column)) {
                ps.setString(1, run);
                ps.setLong(2, n);
                ps.executeUpdate();
            }
        });
    }
}
