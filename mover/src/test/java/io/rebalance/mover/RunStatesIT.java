package io.rebalance.mover;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.copy.CopyStatus;
import io.rebalance.core.copy.RunPlan;
import io.rebalance.core.copy.RunStatus;
import io.rebalance.core.retry.Retrier;
import io.rebalance.core.slot.Slot;
import io.rebalance.mover.postgres.PostgresRunState;
import io.rebalance.mover.postgres.PostgresSlotStore;
import io.rebalance.mover.redis.RedisRunState;
import io.rebalance.mover.redis.RedisSlotStore;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.testkit.SharedServices;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The run's state answers alike from Redis and from the coordinator's Postgres tables: a run never started reads as
 * Redis's absent keys do, the status changes only from the status expected, the first plan stored stays, counters
 * added by many workers at once lose nothing, events come newest first and are capped, a process is live while its
 * heartbeat is recent, and two runs never see each other's state.
 */
class RunStatesIT {
    private static final SharedServices services = SharedServices.get();

    @RegisterExtension
    static final CoordinatorTables COORDINATOR = new CoordinatorTables();

    private static RunState state(String kind, String run) {
        return kind.equals("redis")
                ? new RedisRunState(services.redis(), new Keyspace(run).run(), Retrier.standard())
                : new PostgresRunState(COORDINATOR.sessions(), COORDINATOR.schema, run, Retrier.standard());
    }

    private static SlotStore slots(String kind, String run, Duration ttl) {
        return kind.equals("redis")
                ? new RedisSlotStore(
                        services.redis(), new Keyspace(run).run(), Retrier.standard(), ttl, Duration.ofDays(1))
                : new PostgresSlotStore(COORDINATOR.sessions(), COORDINATOR.schema, run, Retrier.standard(), ttl);
    }

    private static RunPlan plan(String table) {
        return new RunPlan(table, "id", table, "", "us-east-1", "20241020.04", "20241020.00", 1000, 0, null, false);
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void aRunNeverStartedReadsEmptyAndItsStatusChangesOnlyFromTheOneExpected(String kind) {
        RunState run = state(kind, SharedServices.unique("run"));
        assertThat(run.status()).isEqualTo(RunStatus.NOT_STARTED);
        assertThat(run.plan()).isNull();
        assertThat(run.watermark()).isNull();
        assertThat(run.rateLimit()).isZero();
        assertThat(run.rowsCopied()).isZero();
        assertThat(run.slotsFinished()).isZero();
        assertThat(run.progress().known()).isFalse();
        assertThat(run.events(10)).isEmpty();
        assertThat(run.liveProcesses(60_000)).isEmpty();

        assertThat(run.compareAndSet(RunStatus.IN_PROGRESS, RunStatus.TO_STOP))
                .as("not in the status expected: unchanged")
                .isEqualTo(RunStatus.NOT_STARTED);
        assertThat(run.compareAndSet(RunStatus.NOT_STARTED, RunStatus.IN_PROGRESS))
                .isEqualTo(RunStatus.IN_PROGRESS);
        assertThat(run.compareAndSet(RunStatus.NOT_STARTED, RunStatus.TO_START)).isEqualTo(RunStatus.IN_PROGRESS);
        run.setStatus(RunStatus.STOPPED);
        assertThat(run.status()).isEqualTo(RunStatus.STOPPED);

        run.setWatermark(Slot.parse("20241020.03"));
        run.setRateLimit(500);
        assertThat(run.watermark()).isEqualTo(Slot.parse("20241020.03"));
        assertThat(run.rateLimit()).isEqualTo(500);

        RunState other = state(kind, SharedServices.unique("run"));
        assertThat(other.status()).as("another run's").isEqualTo(RunStatus.NOT_STARTED);
        assertThat(other.rateLimit()).isZero();
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void ofPlansStoredAtOnceOneStaysAndCountersAddedAtOnceLoseNothing(String kind) throws Exception {
        RunState run = state(kind, SharedServices.unique("run"));
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<RunPlan>> claims = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                RunPlan mine = plan("t" + i);
                claims.add(pool.submit(() -> {
                    go.await();
                    RunPlan inForce = run.claimPlan(mine);
                    for (int n = 0; n < 50; n++) run.addRowsCopied(3);
                    run.slotFinished();
                    return inForce;
                }));
            }
            go.countDown();
            HashSet<RunPlan> inForce = new HashSet<>();
            for (Future<RunPlan> f : claims) inForce.add(f.get());
            assertThat(inForce).as("every claim answered with the same plan").hasSize(1);
            assertThat(run.plan()).isEqualTo(inForce.iterator().next());
            assertThat(run.rowsCopied()).isEqualTo(8 * 50 * 3);
            assertThat(run.slotsFinished()).isEqualTo(8);
        } finally {
            pool.shutdownNow();
        }
        run.replacePlan(plan("accepted"));
        assertThat(run.plan().table()).isEqualTo("accepted");
        run.restoreCounts(7, 2);
        assertThat(run.rowsCopied()).isEqualTo(7);
        assertThat(run.slotsFinished()).isEqualTo(2);
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void eventsComeNewestFirstAndTheOldestAreDropped(String kind) {
        RunState run = state(kind, SharedServices.unique("run"));
        for (int i = 0; i < 1005; i++) run.event("line " + i);
        List<String> all = run.events(2000);
        assertThat(all).hasSize(1000);
        assertThat(all.get(0)).matches("\\d{13} line 1004");
        assertThat(all.get(999)).endsWith(" line 5");
        assertThat(run.events(2)).hasSize(2).last().asString().endsWith(" line 1003");
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void aProcessIsLiveWhileItsHeartbeatIsRecentAndProgressIsReadBack(String kind) {
        RunState run = state(kind, SharedServices.unique("run"));
        run.heartbeat("p1", "{\"workers\":2}");
        run.heartbeat("p2", "{\"workers\":4}");
        run.heartbeat("p2", "{\"workers\":8}");
        assertThat(run.liveProcesses(60_000))
                .containsExactly(
                        java.util.Map.entry("p1", "{\"workers\":2}"), java.util.Map.entry("p2", "{\"workers\":8}"));
        run.leave("p1");
        assertThat(run.liveProcesses(60_000)).containsOnlyKeys("p2");

        // p2 stops beating: past the age asked for it is no longer live, and pruning forgets it
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> run.liveProcesses(200)
                .isEmpty());
        run.pruneProcesses(200);
        assertThat(run.liveProcesses(60_000)).isEmpty();

        CopyStatus p = new CopyStatus(true, "IN_PROGRESS", 10, 5, 2, 48, 3, 1, "20241020.03", "k1", 1234);
        run.writeProgress(p);
        assertThat(run.progress()).isEqualTo(p);
        CopyStatus later = new CopyStatus(true, "FINISHED", 20, 0, 0, 48, 48, 48, "20241020.00", "k2", 5678);
        run.writeProgress(later);
        assertThat(run.progress()).isEqualTo(later);
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void aSlotLeaseIsListedWhileHeldAndNotOnceReleased(String kind) {
        String name = SharedServices.unique("run");
        RunState run = state(kind, name);
        SlotStore store = slots(kind, name, Duration.ofSeconds(30));
        if (store instanceof PostgresSlotStore pg) pg.plan(List.of(Slot.parse("20241020.05")));
        assertThat(run.heldSlotLeases()).isEmpty();
        SlotStore.Acquire held = store.acquire(Slot.parse("20241020.05"), "w");
        assertThat(held.kind()).isEqualTo(SlotStore.Acquire.Kind.ACQUIRED);
        assertThat(run.heldSlotLeases()).hasSize(1).first().asString().contains("20241020.05");
        assertThat(state(kind, SharedServices.unique("run")).heldSlotLeases())
                .as("another run's")
                .isEmpty();
        store.release(Slot.parse("20241020.05"), held.lease().member());
        assertThat(run.heldSlotLeases()).isEmpty();
    }
}
