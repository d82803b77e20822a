package io.rebalance.mover;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.copy.RunStatus;
import io.rebalance.core.slot.Slot;
import io.rebalance.mover.postgres.PostgresSlotStore;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A slot whose holder died (its lease held by a process that is gone) is taken as soon as that lease ends, not after
 * {@code mover.slotRetryDelay}: the walk that met it leased noted when the lease ends, and the manager, with its
 * workers idle, looks again then. Before, it waited the whole pause while the slot waited too.
 */
class IdleWorkerIT {
    private static final Duration LEASE = Duration.ofSeconds(6);
    /** Long enough that a manager waiting it out cannot be mistaken for one that looked again as the lease ended. */
    private static final Duration PAUSE = Duration.ofSeconds(90);

    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void aSlotWhoseHolderDiedIsTakenAsItsLeaseEndsWhileWorkersAreIdle(String coordinator) throws Exception {
        try (MoverFixture f = MoverFixture.coordinatedBy(coordinator)
                .set("mover.slotRetryDelay", PAUSE.toSeconds() + "s")
                .set("mover.leaseTtl", LEASE.toSeconds() + "s")
                .set("mover.workers", "2")
                .generate(900, 3)) {
            Slot middle = Slot.containing(MoverFixture.END.minus(Duration.ofMinutes(90)));
            Map<Slot, Long> leasedAt = new ConcurrentHashMap<>();
            Map<Slot, Long> finishedAt = new ConcurrentHashMap<>();
            PhaseHooks clock = (phase, slot, owner) -> {
                if (phase == Phase.LEASED) leasedAt.putIfAbsent(slot, System.nanoTime());
                if (phase == Phase.SLOT_FINISHED) finishedAt.put(slot, System.nanoTime());
            };
            MoverProcess p = f.process(clock, List.of());

            // a process that died holding the middle slot: its lease runs out LEASE from now
            SlotStore store = f.coordinator().slots();
            if (store instanceof PostgresSlotStore queue) queue.plan(List.of(middle));
            assertThat(store.acquire(middle, "dead-process/1").kind()).isEqualTo(SlotStore.Acquire.Kind.ACQUIRED);
            long leaseEnds = System.nanoTime() + LEASE.toNanos();

            assertThat(f.start(p).get(PAUSE.toSeconds() / 2, TimeUnit.SECONDS)).isEqualTo(RunStatus.FINISHED);

            assertThat(leasedAt.get(middle))
                    .isGreaterThanOrEqualTo(leaseEnds - Duration.ofMillis(100).toNanos());
            // both other slots were done before it came free: the process's workers were idle, waiting for it
            assertThat(finishedAt).hasSize(3);
            finishedAt.forEach((slot, at) -> {
                if (!slot.equals(middle)) assertThat(at).isLessThan(leasedAt.get(middle));
            });
            // and it was taken as its lease ended, not after the manager's pause
            assertThat(Duration.ofNanos(leasedAt.get(middle) - leaseEnds)).isLessThan(Duration.ofSeconds(10));
            assertThat(f.differences()).isEmpty();
        }
    }
}
