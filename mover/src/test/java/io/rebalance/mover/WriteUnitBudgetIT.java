package io.rebalance.mover;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rebalance.mover.postgres.PostgresWriteUnitBudget;
import io.rebalance.mover.redis.RedisWriteUnitBudget;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.UnifiedJedis;

/**
 * The run's write-unit budget, in Redis and in the coordinator's Postgres table alike, as two processes share it: their
 * reservations form one schedule at the rate allowed; throttling reported by either lowers the rate once per episode,
 * and it grows back; consumed units are summed; the on-demand ramp's cap bounds the rate.
 */
class WriteUnitBudgetIT {
    private static final SharedServices services = SharedServices.get();

    @RegisterExtension
    static final CoordinatorTables COORDINATOR = new CoordinatorTables();

    private static final UnifiedJedis REDIS = services.redis();

    private final String prefix = SharedServices.unique("wu") + ":";

    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void reservationsOfEveryProcessFormOneScheduleAtTheRateAllowed(String kind) throws Exception {
        WriteUnitBudget first = budget(kind);
        WriteUnitBudget second = budget(kind);
        first.startCeiling(1_000);
        second.startCeiling(5_000); // a process joining later keeps the run's ceiling
        assertThat(second.read().ceiling()).isEqualTo(1_000);
        // the schedule starts with the first batch, due at once
        Clock clock = new Clock();
        assertThat(clock.first(() -> first.take(50)).waitMicros()).isZero();
        for (int i = 1; i < 39; i++) (i % 2 == 0 ? first : second).take(50);
        WriteUnitBudget.Reservation last = clock.last(() -> second.take(50));
        // 40 batches of 50 units at 1,000 units/s: the 40th is due 1.95 s after the first, whoever asked
        assertThat(last.allowed()).isEqualTo(1_000.0);
        clock.assertDue(last.waitMicros(), 1.95, "the last batch's turn");
    }

    /**
     * Where a reservation's turn falls after the schedule's first, bracketed by the times each call was sent and
     * answered: the servers' own moments lie between, so neither a slow reply nor a fast one fails a schedule that
     * is right, and a reservation lost in a race (50 ms early) is still caught.
     */
    private static final class Clock {
        private long firstSent;
        private long firstAnswered;
        private long lastSent;
        private long lastAnswered;

        WriteUnitBudget.Reservation first(java.util.function.Supplier<WriteUnitBudget.Reservation> call) {
            firstSent = System.nanoTime();
            WriteUnitBudget.Reservation r = call.get();
            firstAnswered = System.nanoTime();
            return r;
        }

        WriteUnitBudget.Reservation last(java.util.function.Supplier<WriteUnitBudget.Reservation> call) {
            lastSent = System.nanoTime();
            WriteUnitBudget.Reservation r = call.get();
            lastAnswered = System.nanoTime();
            return r;
        }

        void assertDue(long waitMicros, double seconds, String what) {
            double earliest = waitMicros / 1e6 + (lastSent - firstAnswered) / 1e9;
            double latest = waitMicros / 1e6 + (lastAnswered - firstSent) / 1e9;
            assertThat(latest)
                    .as("%s: at the latest %.3f s after the first", what, latest)
                    .isGreaterThanOrEqualTo(seconds - 0.025);
            assertThat(earliest)
                    .as("%s: at the earliest %.3f s after the first", what, earliest)
                    .isLessThanOrEqualTo(seconds + 0.025);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void reservationsMadeAtOnceByEightProcessesAreEachScheduled(String kind) throws Exception {
        budget(kind).startCeiling(1_000);
        // the schedule starts with this reservation, due at once (its connection opened before the clock starts)
        WriteUnitBudget starter = budget(kind);
        starter.read();
        Clock clock = new Clock();
        assertThat(clock.first(() -> starter.take(1_000)).waitMicros()).isZero();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<?>> done = new ArrayList<>();
            for (int p = 0; p < 8; p++) {
                WriteUnitBudget process = budget(kind);
                done.add(pool.submit(() -> {
                    go.await();
                    for (int i = 0; i < 25; i++) process.take(50);
                    return null;
                }));
            }
            go.countDown();
            for (Future<?> f : done) f.get();
        } finally {
            pool.shutdownNow();
        }
        WriteUnitBudget ender = budget(kind);
        ender.read();
        long end = clock.last(() -> ender.take(0)).waitMicros();
        // 1,000 units, then 200 reservations of 50 at 1,000 units/s: the schedule runs 11 s past the first
        // reservation; one lost in a race would end it 50 ms earlier
        clock.assertDue(end, 11.0, "where the schedule ends");
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void throttlingReportedByAnyProcessLowersTheRateOnceThenItGrowsBack(String kind) throws Exception {
        budget(kind).startCeiling(1_000);
        WriteUnitBudget.Snapshot cut = budget(kind).report(0, 0, true);
        assertThat(cut.allowed()).isBetween(850.0, 851.0);
        // the other process met the same throttling a moment later: counted, not cut again
        WriteUnitBudget.Snapshot again = budget(kind).report(0, 0, true);
        assertThat(again.throttles()).isEqualTo(2);
        assertThat(again.cuts()).isEqualTo(1);
        assertThat(again.allowed()).isLessThan(860.0);
        await().atMost(Duration.ofSeconds(10))
                .until(() -> budget(kind).read().allowed() > 880); // 2% of the ceiling a second
        assertThat(budget(kind).take(10).allowed()).isBetween(880.0, 1_000.0);
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void aBudgetFarAboveWhatTheTableTookComesDownToItInOneStep(String kind) throws Exception {
        budget(kind).startCeiling(3_000);
        budget(kind).report(1_000, 0, false);
        // a second of consumption is too young an average to trust: the cut is the usual 15%
        assertThat(budget(kind).report(0, 0, true).allowed()).isBetween(2_549.0, 2_560.0);
        // once consumption has been reported for 5 s (made so by dating its start back), the cut goes at once
        // below what the table took
        backdateConsumption(kind);
        double took = budget(kind).read().consumedPerSecond();
        WriteUnitBudget.Snapshot cut = budget(kind).report(0, 0, true);
        assertThat(cut.allowed())
                .as("95%% of the %.0f units/s the table took, not 85%% of the rate", took)
                .isBetween(0.9 * took, 0.95 * took + 1);
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void aBudgetSetWhereThereWasNoneStartsAtItsCeiling(String kind) throws Exception {
        budget(kind).startCeiling(2_000);
        budget(kind).report(0, 0, true); // cut to 1,700
        assertThat(budget(kind).setCeiling(0).on()).isFalse();
        assertThat(budget(kind).setCeiling(2_000).allowed())
                .as("not what was left of the old budget")
                .isEqualTo(2_000.0);
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void consumedUnitsAreSummedOverProcesses(String kind) throws Exception {
        budget(kind).report(300, 0, false);
        WriteUnitBudget.Snapshot s = budget(kind).report(300, 0, false);
        assertThat(s.consumed()).isEqualTo(600.0);
        // an average over about 5 s, over less while the run is younger: a first report covers one second
        assertThat(s.consumedPerSecond()).isBetween(600.0, 663.0);
        assertThat(s.on()).as("no ceiling: metered, not paced").isFalse();
        assertThat(budget(kind).take(1_000).waitMicros()).isZero();
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void theOnDemandRampCapsTheRateAndACeilingOfZeroRemovesTheBudget(String kind) throws Exception {
        budget(kind).startRamp(300);
        budget(kind).startCeiling(1_000);
        assertThat(budget(kind).take(10).allowed()).isEqualTo(300.0);
        assertThat(budget(kind).read().rampCap()).isEqualTo(300.0);
        budget(kind).saveRamp(new OnDemandRamp.State(300, 700, 400, System.currentTimeMillis()), 800);
        // the cap is raised: the rate grows past 300 (2% of the ceiling a second), up to 800 and no further
        await().atMost(Duration.ofSeconds(10)).until(() -> budget(kind).take(1).allowed() > 300);
        assertThat(budget(kind).take(1).allowed()).isLessThanOrEqualTo(800.0);
        assertThat(budget(kind).ramp().peak()).isEqualTo(700.0);
        assertThat(budget(kind).setCeiling(0).on()).isFalse();
        assertThat(budget(kind).take(10).waitMicros()).isZero();
    }

    /** A new instance each call: a process of its own, sharing the run's budget only through the store. */
    private WriteUnitBudget budget(String kind) {
        return kind.equals("redis")
                ? new RedisWriteUnitBudget(REDIS, new Keyspace(prefix).run())
                : new PostgresWriteUnitBudget(COORDINATOR.sessions(), COORDINATOR.schema, prefix);
    }

    /** Dates the start of the reported consumption 6 s back, and the last cut long ago. */
    private void backdateConsumption(String kind) throws Exception {
        if (kind.equals("redis")) {
            long micros = System.currentTimeMillis() * 1_000; // Redis runs on this machine: one clock
            REDIS.hset(
                    new Keyspace(prefix).run().writeUnits(),
                    Map.of("sum_from", Long.toString(micros - 6_000_000), "last_cut", "0"));
            return;
        }
        try (Connection c = services.postgres();
                PreparedStatement ps = c.prepareStatement("UPDATE " + COORDINATOR.schema.writeUnits() + " SET fields"
                        + " = fields || jsonb_build_object('sum_from', extract(epoch FROM clock_timestamp()) * 1000000"
                        + " - 6000000, 'last_cut', 0) WHERE run = ?")) {
            ps.setString(1, prefix);
            assertThat(ps.executeUpdate()).isEqualTo(1);
        }
    }
}
