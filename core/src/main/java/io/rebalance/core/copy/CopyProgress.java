package io.rebalance.core.copy;

import io.rebalance.core.slot.Slot;
import io.rebalance.protocol.keyspace.RunKeys;
import java.util.Map;
import redis.clients.jedis.UnifiedJedis;

/**
 * Whether the backfill may still write a slot. Asked by the tail before it writes (ADR 6) and by verify for its
 * "copy not finished" note. A slot is finished when its state says FINISHED, or when compaction has passed it (the
 * watermark covers it and its state is gone). The state is read before the watermark: the keeper moves the
 * watermark before it deletes states (ADR 3), so a state found missing means the watermark read after it covers it.
 */
public final class CopyProgress {
    private final UnifiedJedis redis;
    private final RunKeys keys;

    public CopyProgress(UnifiedJedis redis, RunKeys keys) {
        this.redis = redis;
        this.keys = keys;
    }

    /** The run's plan as stored now, or null before the first {@code copy} fixed one. */
    public RunPlan plan() {
        String json = redis.get(keys.plan());
        return json == null ? null : RunPlan.fromJson(json);
    }

    /**
     * @param plan the run's plan, or null when no copy has started (then any slot may still be backfilled)
     * @return true while the backfill may still write {@code slot}
     */
    public boolean mayStillWrite(RunPlan plan, Slot slot) {
        if (plan == null) return true;
        if (!plan.range().contains(slot)) return false;
        Map<String, String> state = redis.hgetAll(keys.slotState(slot.name()));
        if ("FINISHED".equals(state.get("status"))) return false;
        String watermark = redis.get(keys.lastSlot());
        return watermark == null || slot.isOlderThan(Slot.parse(watermark));
    }
}
