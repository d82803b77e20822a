package io.rebalance.mover;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.testkit.SharedServices;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.UnifiedJedis;

/**
 * The run's write-unit budget in Redis, as two processes share it: their reservations form one schedule at the rate
 * allowed; throttling reported by either lowers the rate once per episode, and it grows back; consumed units are
 * summed; the on-demand ramp's cap bounds the rate.
 */
class WriteUnitBudgetIT {
    private final String prefix = SharedServices.unique("wu") + ":";

    @Test
    void reservationsOfEveryProcessFormOneScheduleAtTheRateAllowed() {
        try (UnifiedJedis a = SharedServices.get().redis();
                UnifiedJedis b = SharedServices.get().redis()) {
            WriteUnitBudget first = budget(a);
            WriteUnitBudget second = budget(b);
            first.startCeiling(1_000);
            second.startCeiling(5_000); // a process joining later keeps the run's ceiling
            assertThat(second.read().ceiling()).isEqualTo(1_000);
            long start = System.nanoTime();
            WriteUnitBudget.Reservation last = null;
            for (int i = 0; i < 40; i++) last = (i % 2 == 0 ? first : second).take(50);
            double elapsed = (System.nanoTime() - start) / 1e9;
            // 40 batches of 50 units at 1,000 units/s: the 40th is due 1.95 s after the first, whoever asked
            assertThat(last.allowed()).isEqualTo(1_000.0);
            assertThat(last.waitMicros() / 1e6 + elapsed)
                    .as("the last batch's turn, %.3f s after the first was asked", elapsed)
                    .isBetween(1.95 - 0.001, 1.95 + 0.05);
        }
    }

    @Test
    void throttlingReportedByAnyProcessLowersTheRateOnceThenItGrowsBack() {
        try (UnifiedJedis a = SharedServices.get().redis();
                UnifiedJedis b = SharedServices.get().redis()) {
            budget(a).startCeiling(1_000);
            WriteUnitBudget.Snapshot cut = budget(a).report(0, 0, true);
            assertThat(cut.allowed()).isBetween(850.0, 851.0);
            // the other process met the same throttling a moment later: counted, not cut again
            WriteUnitBudget.Snapshot again = budget(b).report(0, 0, true);
            assertThat(again.throttles()).isEqualTo(2);
            assertThat(again.cuts()).isEqualTo(1);
            assertThat(again.allowed()).isLessThan(860.0);
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> budget(a).read().allowed() > 880); // 2% of the ceiling a second
            assertThat(budget(b).take(10).allowed()).isBetween(880.0, 1_000.0);
        }
    }

    @Test
    void aBudgetFarAboveWhatTheTableTookComesDownToItInOneStep() {
        try (UnifiedJedis a = SharedServices.get().redis()) {
            budget(a).startCeiling(3_000);
            budget(a).report(1_000, 0, false);
            // a second of consumption is too young an average to trust: the cut is the usual 15%
            assertThat(budget(a).report(0, 0, true).allowed()).isBetween(2_549.0, 2_560.0);
            // once consumption has been reported for 5 s (made so by dating its start back), the cut goes at once
            // below what the table took
            String key = new Keyspace(prefix).run().writeUnits();
            long micros = System.currentTimeMillis() * 1_000; // Redis runs on this machine: one clock
            a.hset(key, Map.of("sum_from", Long.toString(micros - 6_000_000), "last_cut", "0"));
            double took = budget(a).read().consumedPerSecond();
            WriteUnitBudget.Snapshot cut = budget(a).report(0, 0, true);
            assertThat(cut.allowed())
                    .as("95%% of the %.0f units/s the table took, not 85%% of the rate", took)
                    .isBetween(0.9 * took, 0.95 * took + 1);
        }
    }

    @Test
    void aBudgetSetWhereThereWasNoneStartsAtItsCeiling() {
        try (UnifiedJedis a = SharedServices.get().redis()) {
            budget(a).startCeiling(2_000);
            budget(a).report(0, 0, true); // cut to 1,700
            assertThat(budget(a).setCeiling(0).on()).isFalse();
            assertThat(budget(a).setCeiling(2_000).allowed())
                    .as("not what was left of the old budget")
                    .isEqualTo(2_000.0);
        }
    }

    @Test
    void consumedUnitsAreSummedOverProcesses() {
        try (UnifiedJedis a = SharedServices.get().redis();
                UnifiedJedis b = SharedServices.get().redis()) {
            budget(a).report(300, 0, false);
            WriteUnitBudget.Snapshot s = budget(b).report(300, 0, false);
            assertThat(s.consumed()).isEqualTo(600.0);
            // an average over about 5 s, over less while the run is younger: a first report covers one second
            assertThat(s.consumedPerSecond()).isBetween(600.0, 663.0);
            assertThat(s.on()).as("no ceiling: metered, not paced").isFalse();
            assertThat(budget(a).take(1_000).waitMicros()).isZero();
        }
    }

    @Test
    void theOnDemandRampCapsTheRateAndACeilingOfZeroRemovesTheBudget() {
        try (UnifiedJedis a = SharedServices.get().redis()) {
            budget(a).startRamp(300);
            budget(a).startCeiling(1_000);
            assertThat(budget(a).take(10).allowed()).isEqualTo(300.0);
            assertThat(budget(a).read().rampCap()).isEqualTo(300.0);
            budget(a).saveRamp(new OnDemandRamp.State(300, 700, 400, System.currentTimeMillis()), 800);
            // the cap is raised: the rate grows past 300 (2% of the ceiling a second), up to 800 and no further
            await().atMost(Duration.ofSeconds(10)).until(() -> budget(a).take(1).allowed() > 300);
            assertThat(budget(a).take(1).allowed()).isLessThanOrEqualTo(800.0);
            assertThat(budget(a).ramp().peak()).isEqualTo(700.0);
            assertThat(budget(a).setCeiling(0).on()).isFalse();
            assertThat(budget(a).take(10).waitMicros()).isZero();
        }
    }

    private WriteUnitBudget budget(UnifiedJedis redis) {
        return new WriteUnitBudget(redis, new Keyspace(prefix).run());
    }
}
