package io.rebalance.protocol.keyspace;

import java.util.Set;
import java.util.regex.Pattern;

/**
 * The copy's keys. A slot's lease and state share the slot's name as hash tag, {@code {20241020.02}}, so the
 * scripts that touch both run on one node of a Redis Cluster; the run's global keys are single-key operations and
 * need no tag. Reset group: {@link ResetGroup#COPY}.
 */
public final class RunKeys {
    private static final Set<String> NAMES = Set.of(
            "status",
            "plan",
            "last_slot",
            "keeper",
            "rate_limit",
            "write_units",
            "rows_copied",
            "slots_finished",
            "progress",
            "processes",
            "process_info",
            "events",
            "history");
    private static final Pattern RATE_WINDOW = Pattern.compile("rate:\\d+");
    private static final Set<String> SLOT_NAMES = Set.of("worker", "state");

    private final String prefix;

    RunKeys(String prefix) {
        this.prefix = prefix;
    }

    /** The prefix the run's keys start with (scans for slot leases). */
    public String prefix() {
        return prefix;
    }

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

    /**
     * Hash: the run's write-unit budget shared by every process (its ceiling, the rate allowed now, the schedule of
     * reservations, the units consumed and the on-demand ramp's peaks).
     */
    public String writeUnits() {
        return prefix + "write_units";
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

    /** Capped list of the copy's progress every 10 s over the last hour ("epoch ms rows rows/s"), newest first. */
    public String history() {
        return prefix + "history";
    }

    /** The lease of the slot named {@code slot} (its worker's member); the slot's name is the hash tag. */
    public String slotLease(String slot) {
        return prefix + "{" + slot + "}:worker";
    }

    /** Whether {@code key} is a slot's lease ({@link #slotLease}). */
    public boolean isSlotLease(String key) {
        return key.startsWith(prefix + "{") && key.endsWith("}:worker");
    }

    /** Hash: the slot's status, cursor, rows and the member of the lease that last saved it. */
    public String slotState(String slot) {
        return prefix + "{" + slot + "}:state";
    }

    static boolean owns(String name) {
        if (NAMES.contains(name) || RATE_WINDOW.matcher(name).matches()) return true;
        String rest = Keyspace.afterAnyTag(name);
        return rest != null && SLOT_NAMES.contains(rest);
    }
}
