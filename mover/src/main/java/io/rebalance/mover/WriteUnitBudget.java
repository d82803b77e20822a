package io.rebalance.mover;

/**
 * The run's write units per second, one budget for every copy process (ADR 15). A batch reserves
 * its estimated units before it is sent and waits its turn: the reservations form one schedule at the rate allowed
 * now (a virtual clock on the coordinator's own time), so the processes together send at that rate, spread evenly
 * rather than in bursts at each second's start. What DynamoDB says a call consumed corrects the schedule.
 *
 * <p>The rate allowed adapts. Throttling met by any process lowers it, at most once per 2 s however many processes
 * met the same throttling: to 85%, or to 95% of the rate the table took when that is lower. It grows back by 2% of
 * the ceiling per second up to what the table took, a quarter as fast above, within the ceiling
 * ({@code mover.writeUnits}) and, on an on-demand table, the ramp's cap ({@link OnDemandRamp}).
 */
public interface WriteUnitBudget {
    /** The budget as it stands: units per second, and counts since the run began. */
    record Snapshot(
            long ceiling,
            double allowed,
            double consumedPerSecond,
            long throttles,
            long cuts,
            double rampCap,
            double consumed) {
        public static final Snapshot NONE = new Snapshot(0, 0, 0, 0, 0, 0, 0);

        /** Whether the run has a write-unit budget. */
        public boolean on() {
            return ceiling > 0;
        }
    }

    /** A reservation: how long to wait before sending, and the rate it was scheduled at. */
    record Reservation(long waitMicros, double allowed) {}

    /** Sets the ceiling, units/s for the whole run; 0 removes the budget. Takes effect at the next reservation. */
    Snapshot setCeiling(long unitsPerSecond);

    /** Sets the ceiling unless the run has one (a process joining keeps what `rebalance rate --units` set). */
    void startCeiling(long unitsPerSecond);

    /** Reserves {@code units} in the run's schedule. */
    Reservation take(long units);

    /** Reports what calls consumed since the last report, the schedule's correction, and throttling met. */
    Snapshot report(double consumed, double correction, boolean throttled);

    Snapshot read();

    /** The on-demand ramp's state, as the active keeper keeps it. */
    OnDemandRamp.State ramp();

    /** Starts the ramp of an on-demand table unless the run has one: its cap begins at {@code warm}. */
    void startRamp(double warm);

    void saveRamp(OnDemandRamp.State s, double cap);
}
