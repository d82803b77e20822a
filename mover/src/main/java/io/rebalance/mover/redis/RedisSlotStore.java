package io.rebalance.mover.redis;

import io.rebalance.core.retry.Retrier;
import io.rebalance.core.slot.Slot;
import io.rebalance.mover.SlotStore;
import io.rebalance.protocol.LuaScript;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.keyspace.RunKeys;
import io.rebalance.protocol.lease.LeaseReply;
import io.rebalance.protocol.lease.LeaseStore;
import io.rebalance.protocol.lease.OwnedLease;
import io.rebalance.protocol.lease.RedisLeaseStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import redis.clients.jedis.AbstractPipeline;
import redis.clients.jedis.Response;
import redis.clients.jedis.UnifiedJedis;

/**
 * A slot's lease and state in Redis, changed only through scripts that check ownership in the same step. Each call is
 * retried with backoff (the Redis layer of recovery); a refusal is an answer, not a failure, and is never retried.
 */
public final class RedisSlotStore implements SlotStore {
    private static final LuaScript SAVE = LuaScript.load(RedisSlotStore.class, "slot_save.lua");
    private static final LuaScript ERROR = LuaScript.load(RedisSlotStore.class, "slot_error.lua");
    /** Slots read in one pipeline by {@link #copies}. */
    private static final int PIPELINE = 1_000;

    private final UnifiedJedis redis;
    private final LeaseStore leases;
    private final Duration leaseTtl;
    private final RunKeys keys;
    private final Retrier retrier;
    private final String leaseMs;
    private final String stateMs;

    public RedisSlotStore(UnifiedJedis redis, RunKeys keys, Retrier retrier, Duration leaseTtl, Duration stateTtl) {
        this.redis = redis;
        this.leases = new RedisLeaseStore(redis);
        this.leaseTtl = leaseTtl;
        this.keys = keys;
        this.retrier = retrier;
        this.leaseMs = Long.toString(leaseTtl.toMillis());
        this.stateMs = Long.toString(stateTtl.toMillis());
    }

    @Override
    public Acquire acquire(Slot slot, String owner) {
        return SlotStore.acquire(this, retrier, leases, keys.slotLease(slot.name()), slot, owner, leaseTtl);
    }

    /** Deletes their states and their leases' token counters, so Redis holds a few keys whatever the run's length. */
    @Override
    public void forget(List<Slot> compacted) {
        for (Slot s : compacted) {
            redis.del(keys.slotState(s.name()));
            // Its lease's token counter goes too: a slot below the watermark is never copied again (a worker that
            // takes its lease lets it go without writing), so nothing can be fenced by its tokens any more.
            redis.del(Keyspace.leaseToken(keys.slotLease(s.name())));
        }
    }

    @Override
    public String save(Slot slot, String owner, String lastId, long rows, String status) {
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

    @Override
    public void recordError(Slot slot, String member, String message) {
        retrier.call(
                "record error of slot " + slot,
                () -> ERROR.eval(redis, slotKeys(slot), List.of(member, message, stateMs)));
    }

    /** Gives the slot's lease back if {@code owner} (or the member {@code owner}) holds it. */
    @Override
    public void release(Slot slot, String owner) {
        SlotStore.release(retrier, leases, keys.slotLease(slot.name()), slot, owner);
    }

    /**
     * Gives back the lease of a slot compaction has passed (a worker raced the keeper to it) and deletes its token
     * counter, as compaction does: nothing is fenced by that slot's tokens any more, and Redis keeps no key for it.
     */
    @Override
    public void releaseCompacted(Slot slot, OwnedLease lease) {
        retrier.run("release compacted slot " + slot, () -> {
            lease.release();
            redis.del(Keyspace.leaseToken(keys.slotLease(slot.name())));
        });
    }

    /** The slot's state hash (status, last_id, rows, owner, error); empty when none is stored. */
    @Override
    public Map<String, String> state(Slot slot) {
        return retrier.call("read state of slot " + slot, () -> redis.hgetAll(keys.slotState(slot.name())));
    }

    @Override
    public String leaseHolder(Slot slot) {
        return retrier.call("read lease of slot " + slot, () -> redis.get(keys.slotLease(slot.name())));
    }

    /** Read from the slots' own keys, not the processes' heartbeats, which lag by a second. */
    @Override
    public List<Copy> copies(List<Slot> slots) {
        List<Copy> out = new ArrayList<>(slots.size());
        for (int from = 0; from < slots.size(); from += PIPELINE) {
            List<Slot> batch = slots.subList(from, Math.min(slots.size(), from + PIPELINE));
            List<Response<String>> status = new ArrayList<>(batch.size());
            List<Response<Boolean>> lease = new ArrayList<>(batch.size());
            try (AbstractPipeline p = redis.pipelined()) {
                for (Slot slot : batch) {
                    status.add(p.hget(keys.slotState(slot.name()), "status"));
                    lease.add(p.exists(keys.slotLease(slot.name())));
                }
                p.sync();
            }
            for (int j = 0; j < batch.size(); j++) {
                out.add(
                        "FINISHED".equals(status.get(j).get())
                                ? Copy.FINISHED
                                : lease.get(j).get() ? Copy.LEASED : Copy.WAITING);
            }
        }
        return out;
    }

    private List<String> slotKeys(Slot slot) {
        return List.of(keys.slotLease(slot.name()), keys.slotState(slot.name()));
    }

    /** @return null when the script wrote, else who holds the lease now ("" for nobody) */
    static String refusal(Object scriptResult) {
        LeaseReply r = LeaseReply.of(scriptResult);
        return r.granted() ? null : r.member();
    }
}
