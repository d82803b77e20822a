package io.rebalance.mover;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.core.copy.CopyStatus;
import io.rebalance.core.copy.RunPlan;
import io.rebalance.core.copy.RunStatus;
import io.rebalance.core.slot.Slot;
import java.util.Optional;

/**
 * What Redis holds of a finished copy (its plan and rows copied; every slot of the plan is finished), kept where Redis' loss cannot reach it (the
 * Postgres fence, ADR 12) so a Redis that came back empty can be given it back: the copy does not start over.
 * Verification results are not kept: what the reverse stream and the tail changed since was marked in Redis, and may
 * be gone with it, so the slots are verified again before the next cutover.
 *
 * @param prefix the run's Redis prefix: a record is given back only to the run it was kept for
 * @param plan the run's plan, as {@link RunPlan#toJson()} writes it
 */
public record FinishedCopy(String prefix, String plan, long rows) {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** @return the run's record when its copy is FINISHED, else empty */
    public static Optional<FinishedCopy> of(RunState run) {
        if (run.status() != RunStatus.FINISHED) return Optional.empty();
        RunPlan plan = run.plan();
        if (plan == null) return Optional.empty();
        return Optional.of(new FinishedCopy(run.name(), plan.toJson(), run.rowsCopied()));
    }

    /**
     * Gives the record back to a Redis that has no run under the prefix: plan, watermark (every slot finished and
     * compacted), counts and progress, then the status FINISHED last, so a reader never sees FINISHED without the
     * plan.
     *
     * @return whether it did (false when a run exists there: a newer one, or the same one intact)
     */
    public boolean restore(RunState run) {
        if (!prefix.equals(run.name())) return false; // another run's, under another prefix
        if (run.plan() != null || run.status() != RunStatus.NOT_STARTED) return false;
        RunPlan kept = RunPlan.fromJson(plan);
        if (run.claimPlan(kept).toJson().equals(plan)) {
            // every slot finished: compacted up to the last, as the keeper leaves a finished run
            long total = kept.range().count();
            Slot last = kept.range().last();
            run.setWatermark(last);
            run.restoreCounts(rows, total);
            run.writeProgress(new CopyStatus(
                    true,
                    RunStatus.FINISHED.name(),
                    rows,
                    0,
                    -1,
                    total,
                    total,
                    total,
                    last.name(),
                    "restored",
                    System.currentTimeMillis()));
            run.compareAndSet(RunStatus.NOT_STARTED, RunStatus.FINISHED);
            run.event("restored FINISHED from the record kept on the Postgres fence: Redis had lost the run's keys");
            return true;
        }
        return false;
    }

    public String toJson() {
        try {
            return JSON.writeValueAsString(this);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    public static FinishedCopy fromJson(String json) {
        try {
            return JSON.readValue(json, FinishedCopy.class);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("the finished copy's record on the fence is unreadable: " + json, e);
        }
    }
}
