package io.rebalance.cdc;

import io.rebalance.core.copy.CopyProgress;
import io.rebalance.core.copy.RunPlan;
import io.rebalance.core.copy.RunStatus;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.slot.SlotKeyspace;
import io.rebalance.protocol.keyspace.TailKeys;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

/**
 * The keys the tail wrote while the backfill could still overwrite them (ADR 6). The backfill puts rows as it read
 * them, without a condition, so a page read before a change and written after the tail applied it would put the
 * older row back. Every key the tail is about to write in a slot the backfill has not finished is recorded here
 * first; once that slot is finished, {@link Reconciler} writes those keys again from Postgres as it is then.
 *
 * <p>The slot of a key comes from the key itself (ULID, uuid or snowflake time). When slots come from a time
 * column, a row can move between slots when that column changes, and the backfill of any slot it was ever in may
 * write it; a key range is Postgres' to tell (the key's collation orders it): such keys go to one bucket for the
 * whole run, reconciled when the run is FINISHED.
 */
final class TouchedKeys {
    static final String RUN_BUCKET = "run";

    private final UnifiedJedis redis;
    private final TailKeys keys;
    private final CopyProgress progress;
    private final SlotKeyspace keyspace;
    private final String runStatusKey;
    private final Set<Slot> finished = new HashSet<>();
    private String planJson;

    TouchedKeys(UnifiedJedis redis, TailKeys keys, CopyProgress progress, SlotKeyspace keyspace, String runStatusKey) {
        this.redis = redis;
        this.keys = keys;
        this.progress = progress;
        this.keyspace = keyspace;
        this.runStatusKey = runStatusKey;
    }

    /** Records the keys the backfill may still overwrite; call before writing them. @return how many were recorded */
    int beforeWrite(Collection<String> written) {
        RunPlan plan = progress.plan();
        String json = plan == null ? null : plan.toJson();
        if (json == null || !json.equals(planJson)) finished.clear(); // a new run: nothing is known finished
        planJson = json;
        boolean bySlot = keyspace.keyNamesSlot();
        if (!bySlot && plan != null && RunStatus.FINISHED.name().equals(redis.get(runStatusKey))) return 0;
        Map<String, List<String>> bucket = new HashMap<>();
        for (String key : written) {
            if (!bySlot) {
                bucket.computeIfAbsent(RUN_BUCKET, b -> new ArrayList<>()).add(key);
                continue;
            }
            Slot slot = keyspace.slotOfKey(key).orElseThrow();
            if (finished.contains(slot)) continue;
            if (!progress.mayStillWrite(plan, slot)) {
                finished.add(slot); // a finished slot stays finished for this plan
                continue;
            }
            bucket.computeIfAbsent(slot.name(), b -> new ArrayList<>()).add(key);
        }
        int n = 0;
        for (var e : bucket.entrySet()) {
            redis.sadd(keys.touched(e.getKey()), e.getValue().toArray(String[]::new));
            redis.sadd(keys.touchedSlots(), e.getKey());
            n += e.getValue().size();
        }
        return n;
    }

    /** Buckets whose backfill is over, so their keys can be written again for good. */
    List<String> ready() {
        RunPlan plan = progress.plan();
        boolean runFinished = plan != null && RunStatus.FINISHED.name().equals(redis.get(runStatusKey));
        List<String> out = new ArrayList<>();
        for (String bucket : redis.smembers(keys.touchedSlots())) {
            boolean done = bucket.equals(RUN_BUCKET)
                    ? runFinished
                    : plan != null && !progress.mayStillWrite(plan, Slot.parse(bucket));
            if (done) out.add(bucket);
        }
        return out;
    }

    /** A page of the bucket's keys from {@code cursor} (SSCAN: every key there throughout is seen at least once). */
    ScanResult<String> scan(String bucket, String cursor, int n) {
        return redis.sscan(keys.touched(bucket), cursor, new ScanParams().count(n));
    }

    /** Removes keys that have been written again. */
    void done(String bucket, List<String> written) {
        redis.srem(keys.touched(bucket), written.toArray(String[]::new));
    }

    /**
     * Drops an emptied bucket from the index. A key added after this was written after the backfill of its slot
     * ended, and so needs no reconciling.
     */
    void forgetIfEmpty(String bucket) {
        if (redis.scard(keys.touched(bucket)) == 0) redis.srem(keys.touchedSlots(), bucket);
    }

    long pending() {
        long n = 0;
        for (String bucket : redis.smembers(keys.touchedSlots())) n += redis.scard(keys.touched(bucket));
        return n;
    }
}
