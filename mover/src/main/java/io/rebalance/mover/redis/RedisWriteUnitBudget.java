package io.rebalance.mover.redis;

import io.rebalance.mover.OnDemandRamp;
import io.rebalance.mover.WriteUnitBudget;
import io.rebalance.protocol.LuaScript;
import io.rebalance.protocol.keyspace.RunKeys;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import redis.clients.jedis.UnifiedJedis;

/**
 * The write-unit budget ({@link WriteUnitBudget}) in one Redis hash, changed by one script ({@code write_units.lua}) on
 * Redis' own clock.
 */
public final class RedisWriteUnitBudget implements WriteUnitBudget {
    private static final LuaScript SCRIPT = LuaScript.load(RedisWriteUnitBudget.class, "write_units.lua");

    private final UnifiedJedis redis;
    private final RunKeys keys;

    public RedisWriteUnitBudget(UnifiedJedis redis, RunKeys keys) {
        this.redis = redis;
        this.keys = keys;
    }

    @Override
    public Snapshot setCeiling(long unitsPerSecond) {
        return snapshot(eval("ceiling", Long.toString(unitsPerSecond), "0"));
    }

    @Override
    public void startCeiling(long unitsPerSecond) {
        eval("ceiling", Long.toString(unitsPerSecond), "1");
    }

    @Override
    public Reservation take(long units) {
        List<?> r = eval("take", Long.toString(units));
        return new Reservation((long) Double.parseDouble((String) r.get(0)), Double.parseDouble((String) r.get(1)));
    }

    @Override
    public Snapshot report(double consumed, double correction, boolean throttled) {
        return snapshot(eval("report", num(consumed), num(correction), throttled ? "1" : "0"));
    }

    @Override
    public Snapshot read() {
        return snapshot(eval("read"));
    }

    @Override
    public OnDemandRamp.State ramp() {
        Map<String, String> f = redis.hgetAll(keys.writeUnits());
        return new OnDemandRamp.State(
                Double.parseDouble(f.getOrDefault("ramp_warm", "0")),
                Double.parseDouble(f.getOrDefault("peak", "0")),
                Double.parseDouble(f.getOrDefault("base", "0")),
                Long.parseLong(f.getOrDefault("base_at", "0")));
    }

    @Override
    public void startRamp(double warm) {
        if (redis.hsetnx(keys.writeUnits(), "ramp_warm", num(warm)) == 1)
            redis.hset(
                    keys.writeUnits(),
                    Map.of("ramp_cap", num(warm), "base_at", Long.toString(System.currentTimeMillis())));
    }

    @Override
    public void saveRamp(OnDemandRamp.State s, double cap) {
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
        List<String> argv = new ArrayList<>(List.of(op));
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
