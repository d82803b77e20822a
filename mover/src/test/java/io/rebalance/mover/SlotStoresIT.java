package io.rebalance.mover;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.retry.Retrier;
import io.rebalance.core.slot.Slot;
import io.rebalance.mover.postgres.PostgresSlotStore;
import io.rebalance.mover.redis.RedisSlotStore;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.testkit.SharedServices;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A slot's lease and state answer alike from Redis and from the coordinator's Postgres table: progress saved only
 * under the lease, a worker whose lease lapsed refused (naming who holds the slot now) while its successor resumes
 * from the last saved progress, a finished slot never granted again. In Postgres, workers claiming at once each get a
 * slot of their own, never a finished or held one, and a lapsed claim is claimed again with a larger token.
 */
class SlotStoresIT {
    private static final SharedServices services = SharedServices.get();

    @RegisterExtension
    static final CoordinatorTables COORDINATOR = new CoordinatorTables();

    private static final Slot SLOT = Slot.parse("20241020.05");

    private static SlotStore store(String kind, String run, Duration ttl) {
        return kind.equals("redis")
                ? new RedisSlotStore(
                        services.redis(), new Keyspace(run).run(), Retrier.standard(), ttl, Duration.ofDays(1))
                : postgres(run, ttl);
    }

    private static PostgresSlotStore postgres(String run, Duration ttl) {
        return new PostgresSlotStore(COORDINATOR.sessions(), COORDINATOR.schema, run, Retrier.standard(), ttl);
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void progressIsSavedOnlyUnderTheLeaseAndResumedBySuccessors(String kind) {
        String run = SharedServices.unique("run");
        SlotStore store = store(kind, run, Duration.ofMillis(400));
        assertThat(store.state(SLOT)).isEmpty();
        SlotStore.Acquire first = store.acquire(SLOT, "a");
        assertThat(first.kind()).isEqualTo(SlotStore.Acquire.Kind.ACQUIRED);
        assertThat(first.resumeFrom()).isNull();
        String a = first.lease().member();
        assertThat(store.saveProgress(SLOT, a, "id-100", 100)).isNull();
        assertThat(store.state(SLOT)).containsEntry("last_id", "id-100").containsEntry("rows", "100");
        SlotStore.Acquire busy = store.acquire(SLOT, "b");
        assertThat(busy.kind()).isEqualTo(SlotStore.Acquire.Kind.LEASED);
        assertThat(busy.holder()).isEqualTo(a);

        // a is frozen past its lease; b takes the slot and resumes from a's last save
        Awaitility.await("a's lease lapses")
                .atMost(Duration.ofSeconds(10))
                .until(() -> store.leaseHolder(SLOT) == null);
        SlotStore.Acquire second = store.acquire(SLOT, "b");
        assertThat(second.kind()).isEqualTo(SlotStore.Acquire.Kind.ACQUIRED);
        assertThat(second.resumeFrom()).isEqualTo("id-100");
        assertThat(second.rows()).isEqualTo(100);
        assertThat(second.lease().token()).isGreaterThan(first.lease().token());
        String b = second.lease().member();
        assertThat(store.saveProgress(SLOT, a, "id-999", 899))
                .as("a's late save")
                .isEqualTo(b);
        assertThat(store.finish(SLOT, a, "id-999", 899)).as("a's late finish").isEqualTo(b);
        store.recordError(SLOT, a, "a's late error");
        assertThat(store.state(SLOT)).containsEntry("last_id", "id-100").doesNotContainKey("error");

        assertThat(store.saveProgress(SLOT, b, "id-200", 100)).isNull();
        assertThat(store.finish(SLOT, b, "id-300", 50)).isNull();
        assertThat(store.state(SLOT))
                .containsEntry("status", "FINISHED")
                .containsEntry("last_id", "id-300")
                .containsEntry("rows", "250");
        assertThat(store.leaseHolder(SLOT)).as("finishing gives the lease up").isNull();
        assertThat(store.acquire(SLOT, "c").kind()).isEqualTo(SlotStore.Acquire.Kind.FINISHED);
        assertThat(store.leaseHolder(SLOT)).isNull();
    }

    @Test
    void workersClaimingAtOnceEachGetASlotOfTheirOwn() throws Exception {
        String run = SharedServices.unique("run");
        PostgresSlotStore store = postgres(run, Duration.ofSeconds(30));
        List<Slot> slots = new ArrayList<>();
        for (Slot s = SLOT; slots.size() < 40; s = s.older()) slots.add(s);
        store.plan(slots);
        store.plan(slots); // a second process plans the same run: nothing changes
        // one finished and one held by another: neither is claimed
        SlotStore.Acquire done = store.acquire(slots.get(3), "earlier");
        store.finish(slots.get(3), done.lease().member(), "x", 1);
        store.acquire(slots.get(5), "holder");
        PostgresSlotStore other = postgres(SharedServices.unique("run"), Duration.ofSeconds(30));
        other.plan(slots); // another run's slots in the same table: never claimed by this one

        int workers = 8;
        CountDownLatch start = new CountDownLatch(1);
        ConcurrentLinkedQueue<PostgresSlotStore.Claimed> claimed = new ConcurrentLinkedQueue<>();
        ExecutorService pool = Executors.newFixedThreadPool(workers);
        try {
            List<Future<?>> all = new ArrayList<>();
            for (int w = 0; w < workers; w++) {
                String owner = "w" + w;
                all.add(pool.submit(() -> {
                    start.await();
                    // bounded: a claim that handed out held slots would otherwise go on forever
                    for (int n = 0; n <= slots.size(); n++) {
                        Optional<PostgresSlotStore.Claimed> c = store.claimNext(owner);
                        if (c.isEmpty()) break;
                        claimed.add(c.get());
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : all) f.get(60, java.util.concurrent.TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
        Set<Slot> got = new HashSet<>();
        for (PostgresSlotStore.Claimed c : claimed) {
            assertThat(got.add(c.slot())).as("claimed twice: " + c.slot()).isTrue();
            assertThat(store.leaseHolder(c.slot()))
                    .isEqualTo(c.acquire().lease().member());
        }
        Set<Slot> expected = new HashSet<>(slots);
        expected.remove(slots.get(3));
        expected.remove(slots.get(5));
        assertThat(got).isEqualTo(expected);
        assertThat(other.claimNext("x").map(PostgresSlotStore.Claimed::slot))
                .as("the other run's own")
                .isPresent();
    }

    @Test
    void aLapsedClaimIsClaimedAgainAndItsFirstHolderRefused() {
        String run = SharedServices.unique("run");
        PostgresSlotStore store = postgres(run, Duration.ofMillis(400));
        store.plan(List.of(SLOT));
        PostgresSlotStore.Claimed first = store.claimNext("a").orElseThrow();
        String a = first.acquire().lease().member();
        assertThat(store.saveProgress(SLOT, a, "id-10", 10)).isNull();
        assertThat(store.claimNext("b")).as("held").isEmpty();
        Awaitility.await("a's claim lapses")
                .atMost(Duration.ofSeconds(10))
                .until(() -> store.leaseHolder(SLOT) == null);
        PostgresSlotStore.Claimed second = store.claimNext("b").orElseThrow();
        assertThat(second.slot()).isEqualTo(SLOT);
        assertThat(second.acquire().resumeFrom()).isEqualTo("id-10");
        assertThat(second.acquire().lease().token())
                .isGreaterThan(first.acquire().lease().token());
        assertThat(store.saveProgress(SLOT, a, "id-99", 89))
                .isEqualTo(second.acquire().lease().member());
        // the successor's acquire by its owner extends its claim, as a worker does after picking a slot
        assertThat(store.acquire(SLOT, "b").lease().member())
                .isEqualTo(second.acquire().lease().member());
    }

    @Test
    void aWorkerClaimsTheNewestHourFirstAndTheSlotWithoutTimeLast() {
        String run = SharedServices.unique("run");
        PostgresSlotStore store = postgres(run, Duration.ofSeconds(30));
        List<Slot> planned =
                List.of(SLOT.older(), Slot.NO_TIME, SLOT, SLOT.older().older());
        store.plan(planned);
        List<Slot> order = new ArrayList<>();
        for (Optional<PostgresSlotStore.Claimed> c = store.claimNext("w"); c.isPresent(); c = store.claimNext("w")) {
            order.add(c.get().slot());
            assertThat(store.state(c.get().slot()))
                    .as("claimed, nothing saved yet")
                    .isEmpty();
        }
        assertThat(order).containsExactly(SLOT, SLOT.older(), SLOT.older().older(), Slot.NO_TIME);
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void aFirstStepThatFailedLeavesOnlyItsError(String kind) {
        SlotStore store = store(kind, SharedServices.unique("run"), Duration.ofSeconds(30));
        SlotStore.Acquire a = store.acquire(SLOT, "a");
        store.recordError(SLOT, a.lease().member(), "boom");
        assertThat(store.state(SLOT)).containsOnlyKeys("error").containsEntry("error", "boom");
        assertThat(store.saveProgress(SLOT, a.lease().member(), "id-1", 1)).isNull();
        assertThat(store.state(SLOT))
                .containsEntry("owner", a.lease().member())
                .containsEntry("status", "IN_PROGRESS")
                .doesNotContainKey("error");
    }
}
