package io.rebalance.mover;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The on-demand ramp: the warm throughput at first, then at most twice the peak seen before the current half hour. */
class OnDemandRampTest {
    private static final long MIN = 60_000;

    @Test
    void theCapStartsAtTheWarmThroughputAndDoublesThePeakOnlyHalfAnHourOn() {
        OnDemandRamp.State s = new OnDemandRamp.State(4_000, 0, 0, 0);
        assertThat(OnDemandRamp.cap(s)).isEqualTo(4_000);
        // the copy runs at the cap for 29 minutes: the cap does not move
        for (long t = 0; t < 30 * MIN; t += MIN) s = OnDemandRamp.next(s, 4_000, t);
        assertThat(OnDemandRamp.cap(s)).isEqualTo(4_000);
        // half an hour on, the peak before counts: twice it
        s = OnDemandRamp.next(s, 4_000, 30 * MIN);
        assertThat(OnDemandRamp.cap(s)).isEqualTo(8_000);
        // a new peak within the half hour raises nothing until the next one
        s = OnDemandRamp.next(s, 7_900, 40 * MIN);
        assertThat(OnDemandRamp.cap(s)).isEqualTo(8_000);
        s = OnDemandRamp.next(s, 7_000, 60 * MIN);
        assertThat(OnDemandRamp.cap(s)).isEqualTo(15_800);
    }

    @Test
    void aLowPeakNeverTakesTheCapBelowTheWarmThroughput() {
        OnDemandRamp.State s = new OnDemandRamp.State(12_000, 0, 0, 0);
        s = OnDemandRamp.next(s, 1_000, 31 * MIN);
        assertThat(OnDemandRamp.cap(s)).isEqualTo(12_000);
    }
}
