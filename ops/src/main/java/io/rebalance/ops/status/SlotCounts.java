package io.rebalance.ops.status;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.core.copy.CopyStatus;
import io.rebalance.core.copy.RunPlan;
import io.rebalance.mover.RunState;

/**
 * The copy's slots by state, as {@code rebalance status} and the metrics both count them: finished as the keeper
 * last published, in progress as the live processes' heartbeats list them, and the rest waiting.
 */
public record SlotCounts(long total, long finished, long inProgress) {
    public static SlotCounts of(RunPlan plan, CopyStatus progress, long inProgress) {
        return new SlotCounts(plan == null ? 0 : plan.range().count(), progress.slotsFinished(), inProgress);
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    /** Reads the counts as status does: the plan, the keeper's progress and the slots live processes hold. */
    public static SlotCounts read(RunState run, long leaseTtlMs) {
        long leased = 0;
        for (String info : run.liveProcesses(leaseTtlMs).values()) {
            try {
                leased += JSON.readTree(info).path("slots").size();
            } catch (JsonProcessingException e) {
                // a heartbeat written by another version: its slots are not counted as in progress
            }
        }
        return of(run.plan(), run.progress(), leased);
    }

    /** Slots neither finished nor leased now. */
    public long waiting() {
        return Math.max(0, total - finished - inProgress);
    }
}
