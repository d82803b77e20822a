package io.rebalance.mover;

import io.rebalance.core.redis.LuaScript;
import io.rebalance.core.retry.Retrier;
import io.rebalance.core.slot.Slot;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import redis.clients.jedis.UnifiedJedis;

/**
 * A slot's lease and state in Redis, changed only through scripts that check ownership in the same step:
 * a worker can save progress or finish a slot only while it holds the slot's lease. Each call is retried with
 * backoff (the Redis layer of recovery); a refusal is an answer, not a failure, and is never retried.
 */
public final class SlotStore {
    private static final LuaScript ACQUIRE = LuaScript.load(SlotStore.class, "slot_acquire.lua");
    private static final LuaScript SAVE = LuaScript.load(SlotStore.class, "slot_save.lua");
    private static final LuaScript ERROR = LuaScript.load(SlotStore.class, "slot_error.lua");
    static final LuaScript RENEW = LuaScript.load(SlotStore.class, "lease_renew.lua");
    static final LuaScript CLAIM = LuaScript.load(SlotStore.class, "lease_claim.lua");
    static final LuaScript RELEASE = LuaScript.load(SlotStore.class, "lease_release.lua");

    private final UnifiedJedis redis;
    private final RunKeys keys;
    private final Retrier retrier;
    private final String leaseMs;
    private final String stateMs;

    public SlotStore(UnifiedJedis redis, RunKeys keys, Retrier retrier, Duration leaseTtl, Duration stateTtl) {
        this.redis = redis;
        this.keys = keys;
        this.retrier = retrier;
        this.leaseMs = Long.toString(leaseTtl.toMillis());
        this.stateMs = Long.toString(stateTtl.toMillis());
    }

    /** The answer to an acquire: exactly one of finished, leased by someone else, or acquired with its progress. */
    public record Acquire(Kind kind, String holder, long holderTtlMs, String lastId, long rows) {
        public enum Kind {
            FINISHED,
            LEASED,
            ACQUIRED
        }

        /** Progress saved by an earlier owner, or null when the slot starts from its beginning. */
        public String resumeFrom() {
            return lastId == null || lastId.isEmpty() ? null : lastId;
        }
    }

    public Acquire acquire(Slot slot, String owner) {
        List<?> r = (List<?>) retrier.call(
                "acquire slot " + slot, () -> ACQUIRE.eval(redis, slotKeys(slot), List.of(owner, leaseMs)));
        return switch ((String) r.get(0)) {
            case "FINISHED" -> new Acquire(Acquire.Kind.FINISHED, null, 0, null, 0);
            case "LEASED" ->
                new Acquire(Acquire.Kind.LEASED, (String) r.get(1), Long.parseLong((String) r.get(2)), null, 0);
            default ->
                new Acquire(Acquire.Kind.ACQUIRED, owner, 0, (String) r.get(1), Long.parseLong((String) r.get(2)));
        };
    }

    /** @return null when extended, otherwise the current holder ("" when nobody holds it) */
    public String renew(Slot slot, String owner) {
        return refusal(retrier.call(
                "renew lease of slot " + slot,
                () -> RENEW.eval(redis, List.of(keys.slotLease(slot)), List.of(owner, leaseMs))));
    }

    /** @return null when saved, otherwise the holder that owns the slot now ("" when the lease lapsed) */
    public String saveProgress(Slot slot, String owner, String lastId, long rows) {
        return save(slot, owner, lastId, rows, "IN_PROGRESS");
    }

    /** Marks the slot FINISHED and frees its lease. @return null when done, otherwise the current holder */
    public String finish(Slot slot, String owner, String lastId, long rows) {
        return save(slot, owner, lastId == null ? "" : lastId, rows, "FINISHED");
    }

    private String save(Slot slot, String owner, String lastId, long rows, String status) {
        List<String> args = List.of(
                owner,
                lastId,
                Long.toString(rows),
                leaseMs,
                stateMs,
                status,
                Long.toString(System.currentTimeMillis()));
        return refusal(retrier.call("save progress of slot " + slot, () -> SAVE.eval(redis, slotKeys(slot), args)));
    }

    public void recordError(Slot slot, String owner, String message) {
        retrier.call(
                "record error of slot " + slot,
                () -> ERROR.eval(redis, slotKeys(slot), List.of(owner, message, stateMs)));
    }

    public void release(Slot slot, String owner) {
        retrier.call("release slot " + slot, () -> RELEASE.eval(redis, List.of(keys.slotLease(slot)), List.of(owner)));
    }

    /** The slot's state hash (status, last_id, rows, owner, error); empty when none is stored. */
    public Map<String, String> state(Slot slot) {
        return retrier.call("read state of slot " + slot, () -> redis.hgetAll(keys.slotState(slot)));
    }

    public String leaseHolder(Slot slot) {
        return retrier.call("read lease of slot " + slot, () -> redis.get(keys.slotLease(slot)));
    }

    private List<String> slotKeys(Slot slot) {
        return List.of(keys.slotLease(slot), keys.slotState(slot));
    }

    static String refusal(Object scriptResult) {
        List<?> r = (List<?>) scriptResult;
        return ((Long) r.get(0)) == 1L ? null : (String) r.get(1);
    }
}
