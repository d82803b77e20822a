package io.rebalance.mover;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.copy.RunPlan;
import io.rebalance.core.copy.RunStatus;
import io.rebalance.core.retry.Retrier;
import io.rebalance.core.slot.Slot;
import io.rebalance.mover.postgres.PostgresCoordinator;
import io.rebalance.mover.redis.RedisCoordinator;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.keyspace.RunKeys;
import io.rebalance.testkit.SharedServices;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.UnifiedJedis;

/** Compaction with slots finished out of order, and the single active keeper, over either coordinator. */
class KeeperIT {
    private static final SharedServices services = SharedServices.get();

    @RegisterExtension
    static final CoordinatorTables COORDINATOR = new CoordinatorTables();

    private final String prefix = SharedServices.unique("kp") + ":";
    private final RunKeys keys = new Keyspace(prefix).run();
    private final RunPlan plan =
            new RunPlan("t", "id", "t", "", "us-east-1", "20241020.04", "20241020.00", 1000, 0, null, false);

    private Coordinator coordinator(String kind, UnifiedJedis redis) {
        return kind.equals("redis")
                ? new RedisCoordinator(
                        new Keyspace(prefix), redis, Retrier.standard(), Duration.ofSeconds(20), Duration.ofDays(1))
                : new PostgresCoordinator(
                        COORDINATOR.sessions(), COORDINATOR.schema, prefix, Retrier.standard(), Duration.ofSeconds(20));
    }

    private List<Slot> slots() {
        List<Slot> all = new ArrayList<>();
        plan.range().forEach(all::add);
        return all;
    }

    private void finish(SlotStore store, String slot) {
        Slot s = Slot.parse(slot);
        SlotStore.Acquire a = store.acquire(s, "w-" + slot);
        assertThat(a.kind()).isEqualTo(SlotStore.Acquire.Kind.ACQUIRED);
        assertThat(store.finish(s, a.lease().member(), "x", 10)).isNull();
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void theWatermarkCrossesOnlyConsecutiveFinishedSlotsAndTheirStatesGo(String kind) {
        try (UnifiedJedis redis = services.redis()) {
            Coordinator coordinator = coordinator(kind, redis);
            RunState run = coordinator.run();
            SlotStore store = coordinator.slots();
            run.claimPlan(plan);
            if (coordinator instanceof PostgresCoordinator pg) pg.slots().plan(slots());
            run.setStatus(RunStatus.TO_START);
            Keeper keeper = new Keeper(coordinator, plan, "k1", Duration.ofSeconds(20), Duration.ofMinutes(1));

            finish(store, "20241020.04");
            finish(store, "20241020.03");
            finish(store, "20241020.01"); // .02 is still being copied
            assertThat(keeper.tick()).isEqualTo(RunStatus.IN_PROGRESS);
            assertThat(run.watermark()).isEqualTo(Slot.parse("20241020.03"));
            if (coordinator instanceof PostgresCoordinator pg) {
                pg.slots().plan(slots()); // a process joining plans the run again
                assertThat(store.state(Slot.parse("20241020.04")))
                        .as("a compacted slot's row stays FINISHED, so planning again does not make it PENDING")
                        .containsEntry("status", "FINISHED");
                assertThat(pg.slots().claimNext("w").orElseThrow().slot()).isEqualTo(Slot.parse("20241020.02"));
                store.release(Slot.parse("20241020.02"), "w");
            } else {
                assertRedisStates(redis);
                // a worker that acquires a compacted slot sees nothing saved: it must be told by the watermark
                SlotStore.Acquire late = store.acquire(Slot.parse("20241020.03"), "late");
                assertThat(late.kind()).isEqualTo(SlotStore.Acquire.Kind.ACQUIRED);
                assertThat(Slot.parse("20241020.03").isOlderThan(run.watermark()))
                        .isFalse();
                store.releaseCompacted(Slot.parse("20241020.03"), late.lease()); // as SlotWorker does
            }

            finish(store, "20241020.02");
            finish(store, "20241020.00");
            assertThat(keeper.tick()).isEqualTo(RunStatus.FINISHED);
            assertThat(run.watermark()).isEqualTo(Slot.parse("20241020.00"));
            if (kind.equals("redis"))
                assertThat(io.rebalance.core.redis.RedisScan.keys(redis, prefix))
                        .as("no slot key is left")
                        .noneMatch(k -> k.startsWith(prefix + "{"));
        }
    }

    /** Compacted slots' states are gone from Redis; a finished one not compacted yet never expires. */
    private void assertRedisStates(UnifiedJedis redis) {
        assertThat(redis.exists(keys.slotState(Slot.parse("20241020.04").name())))
                .isFalse();
        assertThat(redis.exists(keys.slotState(Slot.parse("20241020.03").name())))
                .isFalse();
        assertThat(redis.exists(keys.slotState(Slot.parse("20241020.01").name())))
                .isTrue();
        assertThat(redis.pttl(keys.slotState(Slot.parse("20241020.01").name())))
                .as("a finished state never expires before compaction removes it, or the slot would be copied"
                        + " again while the tail takes it for finished")
                .isEqualTo(-1L);
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void onlyOneKeeperIsActiveAndAStandbyTakesOverWhenItResigns(String kind) {
        try (UnifiedJedis redis = services.redis()) {
            coordinator(kind, redis).run().claimPlan(plan);
            Keeper a = new Keeper(coordinator(kind, redis), plan, "a", Duration.ofSeconds(20), Duration.ofMinutes(1));
            Keeper b = new Keeper(coordinator(kind, redis), plan, "b", Duration.ofSeconds(20), Duration.ofMinutes(1));
            assertThat(a.tick()).isNotNull();
            assertThat(b.tick()).isNull();
            assertThat(a.active()).isTrue();
            assertThat(b.active()).isFalse();
            a.resign();
            assertThat(b.tick()).isNotNull();
            assertThat(a.tick()).isNull();
        }
    }
}
