package io.rebalance.mover.redis;

import io.rebalance.core.copy.CopyStatus;
import io.rebalance.core.copy.RunPlan;
import io.rebalance.core.copy.RunStatus;
import io.rebalance.core.redis.RedisScan;
import io.rebalance.core.retry.Retrier;
import io.rebalance.core.slot.Slot;
import io.rebalance.mover.RunState;
import io.rebalance.protocol.LuaScript;
import io.rebalance.protocol.keyspace.RunKeys;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.params.SetParams;

/**
 * The run's state in Redis ({@link RunState}): a key per field under the run's prefix.
 * Every call is retried with backoff; none of these keys is ever written by a script that also touches a slot,
 * which keeps them cluster-safe without hash tags.
 */
public final class RedisRunState implements RunState {
    private static final LuaScript STATUS_CAS = LuaScript.load(RedisRunState.class, "status_cas.lua");
    private static final int EVENTS_KEPT = 1000;

    private final UnifiedJedis redis;
    private final RunKeys keys;
    private final Retrier retrier;

    public RedisRunState(UnifiedJedis redis, RunKeys keys, Retrier retrier) {
        this.redis = redis;
        this.keys = keys;
        this.retrier = retrier;
    }

    public RunKeys keys() {
        return keys;
    }

    @Override
    public String name() {
        return keys.prefix();
    }

    @Override
    public RunStatus status() {
        return RunStatus.parse(retrier.call("read run status", () -> redis.get(keys.status())));
    }

    @Override
    public void setStatus(RunStatus s) {
        retrier.call("set run status " + s, () -> redis.set(keys.status(), s.name()));
    }

    @Override
    public RunStatus compareAndSet(RunStatus from, RunStatus to) {
        return RunStatus.parse((String) retrier.call(
                "change run status " + from + " -> " + to,
                () -> STATUS_CAS.eval(redis, List.of(keys.status()), List.of(from.name(), to.name()))));
    }

    @Override
    public RunPlan claimPlan(RunPlan plan) {
        return retrier.call("store run plan", () -> {
            String stored =
                    redis.set(keys.plan(), plan.toJson(), SetParams.setParams().nx());
            return "OK".equals(stored) ? plan : RunPlan.fromJson(redis.get(keys.plan()));
        });
    }

    @Override
    public void replacePlan(RunPlan plan) {
        retrier.call("store run plan", () -> redis.set(keys.plan(), plan.toJson()));
    }

    @Override
    public RunPlan plan() {
        String json = retrier.call("read run plan", () -> redis.get(keys.plan()));
        return json == null ? null : RunPlan.fromJson(json);
    }

    @Override
    public Slot watermark() {
        String s = retrier.call("read watermark", () -> redis.get(keys.lastSlot()));
        return s == null ? null : Slot.parse(s);
    }

    @Override
    public void setWatermark(Slot slot) {
        retrier.call("set watermark", () -> redis.set(keys.lastSlot(), slot.name()));
    }

    @Override
    public long rateLimit() {
        String s = retrier.call("read rate limit", () -> redis.get(keys.rateLimit()));
        return s == null ? 0 : Long.parseLong(s);
    }

    @Override
    public void setRateLimit(long rowsPerSecond) {
        retrier.call("set rate limit", () -> redis.set(keys.rateLimit(), Long.toString(rowsPerSecond)));
    }

    @Override
    public void addRowsCopied(long n) {
        retrier.call("count rows copied", () -> redis.incrBy(keys.rowsCopied(), n));
    }

    @Override
    public long rowsCopied() {
        String s = retrier.call("read rows copied", () -> redis.get(keys.rowsCopied()));
        return s == null ? 0 : Long.parseLong(s);
    }

    @Override
    public void restoreCounts(long rows, long slots) {
        retrier.run("restore counts", () -> {
            redis.set(keys.rowsCopied(), Long.toString(rows));
            redis.set(keys.slotsFinished(), Long.toString(slots));
        });
    }

    @Override
    public void slotFinished() {
        retrier.call("count finished slot", () -> redis.incr(keys.slotsFinished()));
    }

    @Override
    public long slotsFinished() {
        String s = retrier.call("read finished slots", () -> redis.get(keys.slotsFinished()));
        return s == null ? 0 : Long.parseLong(s);
    }

    @Override
    public void event(String line) {
        try {
            redis.lpush(keys.events(), System.currentTimeMillis() + " " + line);
            redis.ltrim(keys.events(), 0, EVENTS_KEPT - 1);
        } catch (RuntimeException e) {
            // Losing an event line must not fail a slot.
        }
    }

    @Override
    public List<String> events(int n) {
        return retrier.call("read events", () -> redis.lrange(keys.events(), 0, n - 1));
    }

    @Override
    public void heartbeat(String processId, String infoJson) {
        retrier.run("heartbeat", () -> {
            redis.zadd(keys.processes(), System.currentTimeMillis(), processId);
            redis.hset(keys.processInfo(), processId, infoJson);
        });
    }

    @Override
    public void leave(String processId) {
        retrier.run("deregister process", () -> {
            redis.zrem(keys.processes(), processId);
            redis.hdel(keys.processInfo(), processId);
        });
    }

    @Override
    public List<String> heldSlotLeases() {
        return retrier.call("list slot leases", () -> RedisScan.keys(redis, keys.prefix()).stream()
                .filter(keys::isSlotLease)
                .sorted()
                .toList());
    }

    @Override
    public Map<String, String> liveProcesses(long maxAgeMs) {
        return retrier.call("list processes", () -> {
            List<String> ids = redis.zrangeByScore(
                    keys.processes(), System.currentTimeMillis() - maxAgeMs, Double.POSITIVE_INFINITY);
            Map<String, String> out = new TreeMap<>();
            if (ids.isEmpty()) return out;
            List<String> infos = redis.hmget(keys.processInfo(), ids.toArray(String[]::new)); // one round trip
            for (int i = 0; i < ids.size(); i++) {
                if (infos.get(i) != null) out.put(ids.get(i), infos.get(i));
            }
            return out;
        });
    }

    @Override
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

    @Override
    public void writeProgress(CopyStatus progress) {
        retrier.call("write progress", () -> redis.hset(keys.progress(), progress.fields()));
    }

    @Override
    public CopyStatus progress() {
        return CopyStatus.of(retrier.call("read progress", () -> redis.hgetAll(keys.progress())));
    }

    public UnifiedJedis redis() {
        return redis;
    }
}
