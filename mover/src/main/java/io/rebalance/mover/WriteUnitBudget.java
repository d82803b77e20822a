package io.rebalance.mover;

import io.rebalance.protocol.LuaScript;
import io.rebalance.protocol.keyspace.RunKeys;
import java.util.List;
import java.util.Map;
import redis.clients.jedis.UnifiedJedis;

/**
 * The run's write units per second, one budget for every copy process, in one Redis hash (ADR 15). A batch reserves
 * its estimated units before it is sent and waits its turn: the reservations form one schedule at the rate allowed
 * now (a virtual clock in the hash, on Redis' own time), so the processes together send at that rate, spread evenly
 * rather than in bursts at each second's start. What DynamoDB says a call consumed corrects the schedule.
 *
 * <p>The rate allowed adapts. Throttling met by any process lowers it, at most once per 2 s however many processes
 * met the same throttling: to 85%, or to 95% of the rate the table took when that is lower. It grows back by 2% of
 * the ceiling per second up to what the table took, a quarter as fast above, within the ceiling
 * ({@code mover.writeUnits}) and, on an on-demand table, the ramp's cap ({@link OnDemandRamp}).
 */
public final class WriteUnitBudget {
    private static final LuaScript SCRIPT = LuaScript.load(WriteUnitBudget.class, "write_units.lua");

    /** The budget as it stands: units per second, and counts since the run began. */
    public record Snapshot(
            long ceiling,
            double allowed,
            double consumedPerSecond,
            long throttles,
            long cuts,
            double rampCap,
            double consumed) {
        static final Snapshot NONE = new Snapshot(0, 0, 0, 0, 0, 0, 0);

        /** Whether the run has a write-unit budget. */
        public boolean on() {
            return ceiling > 0;
        }
    }

    /** A reservation: how long to wait before sending, and the rate it was scheduled at. */
    record Reservation(long waitMicros, double allowed) {}

    private final UnifiedJedis redis;
    private final RunKeys keys;

    public WriteUnitBudget(UnifiedJedis redis, RunKeys keys) {
        this.redis = redis;
        this.keys = keys;
    }

    /** Sets the ceiling, units/s for the whole run; 0 removes the budget. Takes effect at the next reservation. */
    public Snapshot setCeiling(long unitsPerSecond) {
        return snapshot(eval("ceiling", Long.toString(unitsPerSecond), "0"));
    }

    /** Sets the ceiling unless the run has one (a process joining keeps what `rebalance rate --units` set). */
    void startCeiling(long unitsPerSecond) {
        eval("ceiling", Long.toString(unitsPerSecond), "1");
    }

    Reservation take(long units) {
        List<?> r = eval("take", Long.toString(units));
        return new Reservation((long) Double.parseDouble((String) r.get(0)), Double.parseDouble((String) r.get(1)));
    }

    /** Reports what calls consumed since the last report, the schedule's correction, and throttling met. */
    Snapshot report(double consumed, double correction, boolean throttled) {
        return snapshot(eval("report", num(consumed), num(correction), throttled ? "1" : "0"));
    }

    public Snapshot read() {
        return snapshot(eval("read"));
    }

    /** The on-demand ramp's state, as the active keeper keeps it. */
    OnDemandRamp.State ramp() {
        Map<String, String> f = redis.hgetAll(keys.writeUnits());
        return new OnDemandRamp.State(
                Double.parseDouble(f.getOrDefault("ramp_warm", "0")),
                Double.parseDouble(f.getOrDefault("peak", "0")),
                Double.parseDouble(f.getOrDefault("base", "0")),
                Long.parseLong(f.getOrDefault("base_at", "0")));
    }

    /** Starts the ramp of an on-demand table unless the run has one: its cap begins at {@code warm}. */
    void startRamp(double warm) {
        if (redis.hsetnx(keys.writeUnits(), "ramp_warm", num(warm)) == 1)
            redis.hset(
                    keys.writeUnits(),
                    Map.of("ramp_cap", num(warm), "base_at", Long.toString(System.currentTimeMillis())));
    }

    void saveRamp(OnDemandRamp.State s, double cap) {
        redis.hset(
                keys.writeUnits(),
                Map.of(
                        "peak",
                        num(s.peak()),
                        "base",
                        num(s.base()),
                        "base_at",
                        Long.toString(s.baseAtMs()),
                        "ramp_cap",
                        num(cap)));
    }

    private List<?> eval(String op, String... args) {
        List<String> argv = new java.util.ArrayList<>(List.of(op));
        argv.addAll(List.of(args));
        return (List<?>) SCRIPT.eval(redis, List.of(keys.writeUnits()), argv);
    }

    private static Snapshot snapshot(List<?> r) {
        if (r.isEmpty()) return Snapshot.NONE;
        return new Snapshot(
                (long) Double.parseDouble((String) r.get(0)),
                Double.parseDouble((String) r.get(1)),
                Double.parseDouble((String) r.get(2)),
                (long) Double.parseDouble((String) r.get(3)),
                (long) Double.parseDouble((String) r.get(4)),
                Double.parseDouble((String) r.get(5)),
                Double.parseDouble((String) r.get(6)));
    }

    private static String num(double x) {
        return Double.toString(x);
    }
}
