package io.rebalance.ops.dashboard;

import io.rebalance.core.copy.RunPlan;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.slot.SlotRange;
import io.rebalance.protocol.keyspace.RunKeys;
import io.rebalance.verifier.SlotResult;
import io.rebalance.verifier.VerificationStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import redis.clients.jedis.AbstractPipeline;
import redis.clients.jedis.Response;
import redis.clients.jedis.UnifiedJedis;

/**
 * Every slot of the run in copy order with one state, from Redis alone: a mismatched or failed verification first,
 * then a refused row, a MATCH, a finished copy (every slot from the newest down to the compaction watermark, and any
 * other whose state says FINISHED), a slot lease held now (copying), else waiting. Read from the slots' own keys,
 * not the processes' heartbeats, which lag by a second. One letter a slot keeps 43,000 slots small.
 */
final class SlotHeatmap {
    /** The letters, in the order the page's legend lists them. */
    static final Map<Character, String> STATES = Map.of(
            'w', "waiting",
            'c', "copying",
            'd', "copied",
            'v', "verified",
            'm', "mismatch",
            'r', "refused");

    private static final int PIPELINE = 1_000;

    private SlotHeatmap() {}

    /** The slots' states, one letter each in copy order (newest first), and the first slot's name. */
    record Heatmap(String newest, String states) {}

    static Heatmap read(
            UnifiedJedis redis,
            RunKeys keys,
            RunPlan plan,
            Supplier<Slot> watermark,
            VerificationStore verified,
            Set<String> refusedSlots) {
        if (plan == null) return new Heatmap("", "");
        SlotRange range = plan.range();
        Map<String, VerificationStore.Stored> verdicts = verified.all();
        List<Slot> slots = new ArrayList<>();
        range.forEach(slots::add);
        char[] states = new char[slots.size()];
        List<Integer> unknown = new ArrayList<>();
        for (int i = 0; i < slots.size(); i++) {
            String name = slots.get(i).name();
            VerificationStore.Stored v = verdicts.get(name);
            if (v != null && v.verdict() != SlotResult.Verdict.MATCH) states[i] = 'm';
            else if (refusedSlots.contains(name)) states[i] = 'r';
            else if (v != null) states[i] = 'v';
            else unknown.add(i);
        }
        for (int from = 0; from < unknown.size(); from += PIPELINE) { // one round trip per thousand slots
            List<Integer> batch = unknown.subList(from, Math.min(unknown.size(), from + PIPELINE));
            List<Response<String>> status = new ArrayList<>(batch.size());
            List<Response<Boolean>> lease = new ArrayList<>(batch.size());
            try (AbstractPipeline p = redis.pipelined()) {
                for (int i : batch) {
                    status.add(p.hget(keys.slotState(slots.get(i).name()), "status"));
                    lease.add(p.exists(keys.slotLease(slots.get(i).name())));
                }
                p.sync();
            }
            for (int j = 0; j < batch.size(); j++) {
                if ("FINISHED".equals(status.get(j).get())) states[batch.get(j)] = 'd';
                else states[batch.get(j)] = lease.get(j).get() ? 'c' : 'w';
            }
        }
        // Read after the states: the keeper moves the watermark before it deletes the states it stands for, so a
        // state found gone above was compacted under a watermark this read sees.
        Slot mark = watermark.get();
        long compacted = mark == null ? 0 : range.through(mark);
        for (int i : unknown) if (i < compacted) states[i] = 'd';
        return new Heatmap(slots.isEmpty() ? "" : slots.get(0).name(), new String(states));
    }
}
