package io.rebalance.mover;

import io.rebalance.core.copy.CopyStatus;
import io.rebalance.core.copy.RunPlan;
import io.rebalance.core.copy.RunStatus;
import io.rebalance.core.slot.Slot;
import java.util.List;
import java.util.Map;

/**
 * The run-wide state of a copy: status, plan, watermark, rate limit, counters, live processes, events and the
 * progress line. Kept by the coordinator: {@code RedisRunState} or {@code PostgresRunState}, with the same meaning
 * in both (a status never set reads NOT_STARTED, the plan is stored once, events come newest first).
 */
public interface RunState {
    /** The run's name: the Redis key prefix, or the name its rows carry in the coordinator's tables. */
    String name();

    RunStatus status();

    void setStatus(RunStatus s);

    /** @return the status after the call: {@code to} when the run was in {@code from}, else what it was */
    RunStatus compareAndSet(RunStatus from, RunStatus to);

    /** Stores {@code plan} unless one exists. @return the plan in force (the existing one if there was one) */
    RunPlan claimPlan(RunPlan plan);

    /** Replaces the plan (its columns accepted anew, {@code copy --accept-schema}). */
    void replacePlan(RunPlan plan);

    /** @return the plan, or null when no run exists under this name */
    RunPlan plan();

    /** @return the compaction watermark, or null when no slot is compacted yet */
    Slot watermark();

    void setWatermark(Slot slot);

    /** Rows per second for all processes together; 0 means no limit. */
    long rateLimit();

    void setRateLimit(long rowsPerSecond);

    void addRowsCopied(long n);

    long rowsCopied();

    /** Sets the run's counts outright: a finished copy's, given back to a coordinator that lost them. */
    void restoreCounts(long rows, long slots);

    void slotFinished();

    long slotsFinished();

    /** Adds a line to the capped event list (best effort: an event is visibility, never state). */
    void event(String line);

    /** @return the newest {@code n} events, newest first, each {@code "<epoch ms> <line>"} */
    List<String> events(int n);

    void heartbeat(String processId, String infoJson);

    void leave(String processId);

    /**
     * The slot leases held now. While one lives its worker may still have a write in flight; once it has lapsed,
     * every write made under it was sent before its holder's deadline (ADR 6), whether its process lives or not.
     */
    List<String> heldSlotLeases();

    /** Live processes (heartbeat within {@code maxAgeMs}) with their info JSON. */
    Map<String, String> liveProcesses(long maxAgeMs);

    /** Forgets processes whose heartbeat is older than {@code maxAgeMs} (they died without leaving). */
    void pruneProcesses(long maxAgeMs);

    /** Sets the progress line's fields given, keeping the others. */
    void writeProgress(CopyStatus progress);

    CopyStatus progress();
}
