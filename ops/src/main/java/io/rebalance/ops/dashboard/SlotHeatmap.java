package io.rebalance.ops.dashboard;

import io.rebalance.core.copy.RunPlan;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.slot.SlotRange;
import io.rebalance.mover.SlotStore;
import io.rebalance.verifier.SlotResult;
import io.rebalance.verifier.VerificationStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.function.Supplier;

/**
 * Every slot of the run in copy order with one state, from the run's state store alone (Redis, or Postgres where it
 * coordinates the copy): a mismatched or failed verification first, then a refused row, a MATCH, a finished copy
 * (every slot from the newest down to the compaction watermark, and any other whose state says FINISHED), a slot lease
 * held now (copying), else waiting. Hours outside the plan that the tail wrote are shown too (it copied them, and
 * {@code verify --all} verifies them): the grid reaches from the newest of the plan's and theirs to the oldest. One
 * letter a slot keeps 43,000 slots small.
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

    private SlotHeatmap() {}

    /** The slots' states, one letter each in copy order (newest first), and the first slot's name. */
    record Heatmap(String newest, String states) {}

    /** @param tailSlots the hours the tail wrote (none for key ranges, whose changes name no range) */
    static Heatmap read(
            SlotStore store,
            RunPlan plan,
            Supplier<Slot> watermark,
            Map<String, VerificationStore.Stored> verdicts,
            Set<String> refusedSlots,
            SortedSet<Slot> tailSlots) {
        if (plan == null) return new Heatmap("", "");
        SlotRange range = widened(plan.range(), tailSlots);
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
            else if (!plan.range().contains(slots.get(i))) states[i] = 'd'; // the tail's alone: it copied them
            else unknown.add(i);
        }
        List<SlotStore.Copy> copies =
                store.copies(unknown.stream().map(slots::get).toList());
        for (int j = 0; j < unknown.size(); j++) {
            states[unknown.get(j)] = switch (copies.get(j)) {
                case FINISHED -> 'd';
                case LEASED -> 'c';
                case WAITING -> 'w';
            };
        }
        // Read after the states: the keeper moves the watermark before it deletes the states it stands for, so a
        // state found gone above was compacted under a watermark this read sees.
        Slot mark = watermark.get();
        long compacted = mark == null ? 0 : range.through(mark);
        for (int i : unknown) if (i < compacted) states[i] = 'd';
        return new Heatmap(slots.isEmpty() ? "" : slots.get(0).name(), new String(states));
    }

    /** The plan's range, reaching out to the hours the tail wrote beyond it. */
    private static SlotRange widened(SlotRange plan, SortedSet<Slot> tailSlots) {
        List<Slot> hours = tailSlots.stream()
                .filter(s -> s.kind() == Slot.Kind.HOUR && plan.newest().kind() == Slot.Kind.HOUR)
                .toList();
        if (hours.isEmpty()) return plan;
        Slot newest = plan.newest();
        Slot oldest = plan.oldest();
        for (Slot s : hours) {
            if (newest.isOlderThan(s)) newest = s;
            if (s.isOlderThan(oldest)) oldest = s;
        }
        return new SlotRange(newest, oldest, plan.noTime());
    }
}
