package io.rebalance.mover;

import io.rebalance.core.copy.CopyStatus;
import io.rebalance.core.copy.RunPlan;
import io.rebalance.core.copy.RunStatus;
import io.rebalance.core.redis.RedisScan;
import io.rebalance.core.retry.Retrier;
import io.rebalance.core.slot.Slot;
import io.rebalance.protocol.LuaScript;
import io.rebalance.protocol.keyspace.RunKeys;
import java.util.List;
import java.util.Map;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.params.SetParams;

/**
 * The run-wide state in Redis: status, plan, watermark, rate limit, counters, live processes and events.
 * Every call is retried with backoff; none of these keys is ever written by a script that also touches a slot,
 * which keeps them cluster-safe without hash tags.
 */
public final class RunState {
    private static final LuaScript STATUS_CAS = LuaScript.load(RunState.class, "status_cas.lua");
    private static final int EVENTS_KEPT = 1000;

    private final UnifiedJedis redis;
    private final RunKeys keys;
    private final Retrier retrier;

    public RunState(UnifiedJedis redis, RunKeys keys, Retrier retrier) {
        this.redis = redis;
        this.keys = keys;
        this.retrier = retrier;
    }

    public RunKeys keys() {
        return keys;
    }

    public RunStatus status() {
        return RunStatus.parse(retrier.call("read run status", () -> redis.get(keys.status())));
    }

    public void setStatus(RunStatus s) {
        retrier.call("set run status " + s, () -> redis.set(keys.status(), s.name()));
    }

    /** @return the status after the call: {@code to} when the run was in {@code from}, else what it was */
    public RunStatus compareAndSet(RunStatus from, RunStatus to) {
        return RunStatus.parse((String) retrier.call(
                "change run status " + from + " -> " + to,
                () -> STATUS_CAS.eval(redis, List.of(keys.status()), List.of(from.name(), to.name()))));
    }

    /** Stores {@code plan} unless one exists. @return the plan in force (the existing one if there was one) */
    public RunPlan claimPlan(RunPlan plan) {
        return retrier.call("store run plan", () -> {
            String stored =
                    redis.set(keys.plan(), plan.toJson(), SetParams.setParams().nx());
            return "OK".equals(stored) ? plan : RunPlan.fromJson(redis.get(keys.plan()));
        });
    }

    /** Replaces the plan (its columns accepted anew, {@code copy --accept-schema}). */
    public void replacePlan(RunPlan plan) {
        retrier.call("store run plan", () -> redis.set(keys.plan(), plan.toJson()));
    }

    /** @return the plan, or null when no run exists under this prefix */
    public RunPlan plan() {
        String json = retrier.call("read run plan", () -> redis.get(keys.plan()));
        return json == null ? null : RunPlan.fromJson(json);
    }

    /** @return the compaction watermark, or null when no slot is compacted yet */
    public Slot watermark() {
        String s = retrier.call("read watermark", () -> redis.get(keys.lastSlot()));
        return s == null ? null : Slot.parse(s);
    }

    public void setWatermark(Slot slot) {
        retrier.call("set watermark", () -> redis.set(keys.lastSlot(), slot.name()));
    }

    /** Rows per second for all processes together; 0 means no limit. */
    public long rateLimit() {
        String s = retrier.call("read rate limit", () -> redis.get(keys.rateLimit()));
        return s == null ? 0 : Long.parseLong(s);
    }

    public void setRateLimit(long rowsPerSecond) {
        retrier.call("set rate limit", () -> redis.set(keys.rateLimit(), Long.toString(rowsPerSecond)));
    }

    public void addRowsCopied(long n) {
        retrier.call("count rows copied", () -> redis.incrBy(keys.rowsCopied(), n));
    }

    public long rowsCopied() {
        String s = retrier.call("read rows copied", () -> redis.get(keys.rowsCopied()));
        return s == null ? 0 : Long.parseLong(s);
    }

    /** Sets the run's counts outright: a finished copy's, given back to a Redis that lost them. */
    public void restoreCounts(long rows, long slots) {
        retrier.run("restore counts", () -> {
            redis.set(keys.rowsCopied(), Long.toString(rows));
            redis.set(keys.slotsFinished(), Long.toString(slots));
        });
    }

    public void slotFinished() {
        retrier.call("count finished slot", () -> redis.incr(keys.slotsFinished()));
    }

    public long slotsFinished() {
        String s = retrier.call("read finished slots", () -> redis.get(keys.slotsFinished()));
        return s == null ? 0 : Long.parseLong(s);
    }

    /** Adds a line to the capped event list (best effort: an event is visibility, never state). */
    public void event(String line) {
        try {
            redis.lpush(keys.events(), System.currentTimeMillis() + " " + line);
            redis.ltrim(keys.events(), 0, EVENTS_KEPT - 1);
        } catch (RuntimeException e) {
            // Losing an event line must not fail a slot.
        }
    }

    public List<String> events(int n) {
        return retrier.call("read events", () -> redis.lrange(keys.events(), 0, n - 1));
    }

    public void heartbeat(String processId, String infoJson) {
        retrier.run("heartbeat", () -> {
            redis.zadd(keys.processes(), System.currentTimeMillis(), processId);
            redis.hset(keys.processInfo(), processId, infoJson);
        });
    }

    public void leave(String processId) {
        retrier.run("deregister process", () -> {
            redis.zrem(keys.processes(), processId);
            redis.hdel(keys.processInfo(), processId);
        });
    }

    /**
     * The slot leases held now, by SCAN. While one lives its worker may still have a write in flight; once it has
     * lapsed, every write made under it was sent before its holder's deadline (ADR 6), whether its process lives or
     * not.
     */
    public List<String> heldSlotLeases() {
        return retrier.call("list slot leases", () -> RedisScan.keys(redis, keys.prefix()).stream()
                .filter(keys::isSlotLease)
                .sorted()
                .toList());
    }

    /** Live processes (heartbeat within {@code maxAgeMs}) with their info JSON. */
    public Map<String, String> liveProcesses(long maxAgeMs) {
        return retrier.call("list processes", () -> {
            List<String> ids = redis.zrangeByScore(
                    keys.processes(), System.currentTimeMillis() - maxAgeMs, Double.POSITIVE_INFINITY);
            Map<String, String> out = new java.util.TreeMap<>();
            if (ids.isEmpty()) return out;
            List<String> infos = redis.hmget(keys.processInfo(), ids.toArray(String[]::new)); // one round trip
            for (int i = 0; i < ids.size(); i++) {
                if (infos.get(i) != null) out.put(ids.get(i), infos.get(i));
            }
            return out;
        });
    }

    /** Forgets processes whose heartbeat is older than {@code maxAgeMs} (they died without leaving). */
    public void pruneProcesses(long maxAgeMs) {
        retrier.run("prune processes", () -> {
            List<String> dead = redis.zrangeByScore(
                    keys.processes(), Double.NEGATIVE_INFINITY, System.currentTimeMillis() - maxAgeMs);
            for (String id : dead) {
                redis.zrem(keys.processes(), id);
                redis.hdel(keys.processInfo(), id);
            }
        });
    }

    public void writeProgress(CopyStatus progress) {
        retrier.call("write progress", () -> redis.hset(keys.progress(), progress.fields()));
    }

    public CopyStatus progress() {
        return CopyStatus.of(retrier.call("read progress", () -> redis.hgetAll(keys.progress())));
    }

    public UnifiedJedis redis() {
        return redis;
    }
}
