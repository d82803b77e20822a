package io.rebalance.cli;

import io.rebalance.cdc.ChangedSlots;
import io.rebalance.cdc.TailKeys;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.handoff.Lsn;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.source.SourceTable;
import io.rebalance.cutover.WindowVerification;
import io.rebalance.mover.RunPlan;
import io.rebalance.verifier.SlotResult;
import io.rebalance.verifier.VerificationStore;
import io.rebalance.verifier.Verifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The verification inside the cutover's blocked window: the slots the tail changed after their last verification's
 * WAL position ({@link ChangedSlots}), compared while Postgres takes no writes and the tail has applied everything.
 * Nothing is in flight then, so suspects are re-checked at once. A verification that outlasts the budget fails.
 * Slots newer than the run's plan (rows the application inserted after the copy planned) count as soon as the tail
 * changed them.
 */
final class ChangedSlotVerification implements WindowVerification {
    private final MigrationConfig config;
    private final Connections c;
    private final SourceTable table;
    private final boolean everySlot;

    /** @param everySlot verify every slot, changed or not ({@code --verify-all}) */
    ChangedSlotVerification(MigrationConfig config, Connections c, SourceTable table, boolean everySlot) {
        this.config = config;
        this.c = c;
        this.table = table;
        this.everySlot = everySlot;
    }

    /** The slots to verify: changed after their last verification, or never verified (every slot with everySlot). */
    List<Slot> changed() {
        RunPlan plan = c.runState().plan();
        if (plan == null) return List.of();
        VerificationStore store =
                new VerificationStore(c.redis(), config.redis().prefix());
        Map<String, VerificationStore.Stored> all = store.all();
        ChangedSlots.Positions changed = new ChangedSlots(
                        c.redis(), new TailKeys(config.redis().prefix()), table.keyspace())
                .positions(); // one round trip for every slot: this runs inside the blocked window
        Set<Slot> candidates = new TreeSet<>();
        plan.range().forEach(candidates::add);
        for (String name : changed.bySlot().keySet()) {
            if (!name.equals(ChangedSlots.ALL)) candidates.add(Slot.parse(name)); // also slots newer than the plan
        }
        List<Slot> out = new ArrayList<>();
        for (Slot slot : candidates) {
            VerificationStore.Stored s = all.get(slot.name());
            long verifiedAt = s == null || s.walLsn() == null || s.walLsn().isEmpty() ? 0 : Lsn.parse(s.walLsn());
            if (everySlot || verifiedAt == 0 || changed.lastChange(slot.name()).orElse(0L) > verifiedAt) out.add(slot);
        }
        return out;
    }

    @Override
    public Result verify(Duration budget) throws Exception {
        List<Slot> slots = changed();
        if (slots.isEmpty()) return new Result(true, "no slot changed since its last verification");
        VerificationStore store =
                new VerificationStore(c.redis(), config.redis().prefix());
        Verifier verifier = new Verifier(config, table, c.dynamo(), lsn -> {}); // nothing in flight: Postgres is closed
        ExecutorService runner = Executors.newSingleThreadExecutor();
        try {
            Future<List<SlotResult>> f =
                    runner.submit(() -> verifier.verify(slots, config.verify().parallel(), false, r -> {
                        // An ERROR (the budget's interruption among them) keeps the slot's last result: it says
                        // nothing about the data, and saving it would fail the next cutover's pre-check.
                        if (r.verdict() != SlotResult.Verdict.ERROR) store.save(r);
                    }));
            List<SlotResult> results;
            try {
                results = f.get(budget.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                f.cancel(true);
                return new Result(false, slots.size() + " changed slots did not verify within the budget");
            }
            List<String> bad = results.stream()
                    .filter(r -> r.verdict() != SlotResult.Verdict.MATCH)
                    .map(r -> r.slot() + " " + r.verdict() + " ("
                            + r.differences().size() + " differences)")
                    .toList();
            return bad.isEmpty()
                    ? new Result(true, slots.size() + " changed slots MATCH")
                    : new Result(false, String.join(", ", bad) + "; `rebalance status` lists them");
        } finally {
            runner.shutdownNow();
        }
    }
}
