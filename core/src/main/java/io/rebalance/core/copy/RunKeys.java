package io.rebalance.core.copy;

import io.rebalance.core.slot.Slot;

/**
 * Where a run keeps its state in Redis. Every key starts with the configured prefix (so one SCAN finds them all
 * for a reset). A slot's lease and state share a hash tag, {@code {20241020.02}}, so the scripts that touch both
 * run on one node of a Redis Cluster; global keys are single-key operations and need no tag.
 */
public record RunKeys(String prefix) {
    public String status() {
        return prefix + "status";
    }

    /** JSON of the run's plan: table, key, slot range. The first process writes it; the others must match it. */
    public String plan() {
        return prefix + "plan";
    }

    /** The oldest slot such that it and every newer slot are finished: the compaction watermark. */
    public String lastSlot() {
        return prefix + "last_slot";
    }

    public String keeper() {
        return prefix + "keeper";
    }

    public String rateLimit() {
        return prefix + "rate_limit";
    }

    /** Per-second window of the global rate limiter. */
    public String rateWindow(long epochSecond) {
        return prefix + "rate:" + epochSecond;
    }

    public String rowsCopied() {
        return prefix + "rows_copied";
    }

    public String slotsFinished() {
        return prefix + "slots_finished";
    }

    /** Hash written by the active keeper: rows, rate, eta, slot counts. */
    public String progress() {
        return prefix + "progress";
    }

    /** Sorted set of live processes, scored by their last heartbeat (ms). */
    public String processes() {
        return prefix + "processes";
    }

    /** Hash: process id to a JSON of what it is doing. */
    public String processInfo() {
        return prefix + "process_info";
    }

    /** Capped list of notable events (resumes, lost leases), newest first. */
    public String events() {
        return prefix + "events";
    }

    public String slotLease(Slot slot) {
        return prefix + "{" + slot.name() + "}:worker";
    }

    /** Whether {@code key} is a slot's lease ({@link #slotLease}). */
    public boolean isSlotLease(String key) {
        return key.startsWith(prefix + "{") && key.endsWith("}:worker");
    }

    public String slotState(Slot slot) {
        return prefix + "{" + slot.name() + "}:state";
    }
}
