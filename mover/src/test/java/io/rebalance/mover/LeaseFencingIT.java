package io.rebalance.mover;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.rebalance.core.copy.RunStatus;
import io.rebalance.core.retry.Retrier;
import io.rebalance.core.slot.Slot;
import io.rebalance.mover.redis.RedisSlotStore;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.lease.LeaseLost;
import io.rebalance.protocol.lease.LeaseStore;
import io.rebalance.protocol.lease.OwnedLease;
import io.rebalance.protocol.lease.RedisLeaseStore;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** A worker that pauses longer than its lease must not write or save progress once another worker took the slot. */
class LeaseFencingIT {
    record Step(Phase phase, Slot slot, String owner) {}

    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void aWorkerPausedPastItsLeaseCannotWriteOrSaveAfterAnotherTookTheSlot(String coordinator) throws Exception {
        try (MoverFixture f = MoverFixture.coordinatedBy(coordinator)
                .generate(3_000, 4)
                .set("mover.workers", "1")
                .set("mover.pageSize", "100")
                .set("mover.leaseTtl", "2s")) {
            CountDownLatch paused = new CountDownLatch(1);
            CountDownLatch resume = new CountDownLatch(1);
            AtomicReference<Step> victim = new AtomicReference<>();
            SlotStore store = f.coordinator().slots();
            ConcurrentLinkedQueue<Step> afterResume = new ConcurrentLinkedQueue<>();
            PhaseHooks pauseOnce = (phase, slot, owner) -> {
                Step v = victim.get();
                if (v != null && resume.getCount() == 0 && v.owner().equals(owner))
                    afterResume.add(new Step(phase, slot, owner));
                // pause the first worker after it has saved one page, just as it read the next one
                if (phase == Phase.PAGE_READ
                        && victim.get() == null
                        && store.state(slot).containsKey("last_id")) {
                    victim.set(new Step(phase, slot, owner));
                    paused.countDown();
                    resume.await();
                }
            };
            MoverProcess a = f.process(pauseOnce, List.of());
            var ra = f.start(a);
            assertThat(paused.await(60, TimeUnit.SECONDS)).isTrue();
            Slot slot = victim.get().slot();
            RunState run = f.runState();
            String lastIdAtPause = store.state(slot).get("last_id");

            MoverProcess b = f.process(PhaseHooks.NONE, List.of());
            var rb = f.start(b);
            // b takes over once a's lease expired, and finishes the slot from a's saved progress
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> store.leaseHolder(slot) != null
                                    && store.leaseHolder(slot).startsWith(b.processId())
                            || "FINISHED".equals(store.state(slot).get("status"))
                            || run.watermark() != null && !slot.isOlderThan(run.watermark()));

            resume.countDown(); // a wakes up with a page in hand and a lease it no longer holds
            assertThat(ra.get(60, TimeUnit.SECONDS)).isEqualTo(RunStatus.FINISHED);
            assertThat(rb.get(60, TimeUnit.SECONDS)).isEqualTo(RunStatus.FINISHED);

            // a never reached the write or the progress save for that slot with its stale lease
            assertThat(afterResume)
                    .noneMatch(s -> s.slot().equals(slot)
                            && s.owner().equals(victim.get().owner())
                            && (s.phase() == Phase.BEFORE_WRITE
                                    || s.phase() == Phase.PAGE_WRITTEN
                                    || s.phase() == Phase.PROGRESS_SAVED));
            assertThat(a.counters().leasesLost()).isEqualTo(1);
            assertThat(run.events(1000)).anyMatch(e -> e.contains("lost-lease slot=" + slot.name()));
            // b resumed the slot from a's last_id instead of starting it over
            assertThat(run.events(1000))
                    .anyMatch(e -> e.contains("resume slot=" + slot.name() + " last_id=" + lastIdAtPause));
            assertThat(f.differences()).isEmpty();
        }
    }

    @Test
    void progressFromAStaleOwnerIsRefusedAndNamesTheRealHolder() throws Exception {
        try (MoverFixture f = new MoverFixture()) {
            SlotStore store = new RedisSlotStore(
                    f.redis(),
                    new Keyspace(f.prefix).run(),
                    Retrier.standard(),
                    Duration.ofMillis(200),
                    Duration.ofDays(1));
            Slot slot = Slot.parse("20241020.02");
            SlotStore.Acquire first = store.acquire(slot, "old");
            assertThat(first.kind()).isEqualTo(SlotStore.Acquire.Kind.ACQUIRED);
            String old = first.lease().member();
            assertThat(store.saveProgress(slot, old, "01A", 10)).isNull();
            await().atMost(Duration.ofSeconds(5)).until(() -> store.leaseHolder(slot) == null); // old's lease lapses
            var taken = store.acquire(slot, "new");
            assertThat(taken.kind()).isEqualTo(SlotStore.Acquire.Kind.ACQUIRED);
            assertThat(taken.resumeFrom()).isEqualTo("01A");
            String now = taken.lease().member();
            assertThat(now).startsWith("new#");
            assertThat(taken.lease().token())
                    .as("tokens only rise")
                    .isGreaterThan(first.lease().token());

            assertThat(store.saveProgress(slot, old, "01Z", 99)).isEqualTo(now);
            assertThat(store.finish(slot, old, "01Z", 0)).isEqualTo(now);
            assertThatThrownBy(() -> first.lease().renew())
                    .isInstanceOfSatisfying(
                            LeaseLost.class, e -> assertThat(e.holder()).isEqualTo(now));
            store.release(slot, old); // a late release must not free the new owner's lease
            assertThat(store.leaseHolder(slot)).isEqualTo(now);
            assertThat(store.state(slot)).containsEntry("last_id", "01A").containsEntry("rows", "10");
        }
    }

    /**
     * Renewals can overlap (the worker's and its write's): once one found the lease lost, a renewal answered later
     * must not bring it back, or writes would go on under a lease another holder may have.
     */
    @Test
    void aLeaseFoundLostStaysLostWhateverALaterRenewalSays() throws Exception {
        try (MoverFixture f = new MoverFixture()) {
            LeaseStore leases = new RedisLeaseStore(f.redis());
            String key = new Keyspace(f.prefix)
                    .run()
                    .slotLease(Slot.parse("20241020.03").name());
            OwnedLease lease =
                    OwnedLease.acquire(leases, key, "w", Duration.ofSeconds(30)).lease();
            String member = lease.member();
            f.redis().del(key); // the lease lapses under the holder
            assertThatThrownBy(lease::renew).isInstanceOf(LeaseLost.class);
            f.redis().set(key, member); // a late reply: Redis says this member holds it after all
            assertThatThrownBy(lease::renew).as("a later renewal").isInstanceOf(LeaseLost.class);
            assertThatThrownBy(lease::check).isInstanceOf(LeaseLost.class);
            assertThatThrownBy(lease::beforeWrite).isInstanceOf(LeaseLost.class);
        }
    }
}
