package io.rebalance.mover;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.copy.RunStatus;
import io.rebalance.testkit.Paused;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemRequest;

/**
 * ADR 6's bound, broken on purpose: a worker stalls inside a write, after every check the worker itself makes and
 * right before the SDK sends it (as a throttled call, a GC pause or a stalled socket would), for longer than its
 * lease. Another worker takes the slot and finishes it; then the application deletes one of the rows in the stalled
 * page, and its item goes too (as the tail would apply it). When the stalled worker wakes up, its page must not land:
 * it would bring the deleted row back, after its slot was finished and verified, for good. The slot still ends exact.
 */
class WriteOutlivesLeaseIT {
    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void aWriteStalledPastItsLeaseLandsNothingOnceAnotherWorkerHoldsTheSlot(String coordinator) throws Exception {
        try (MoverFixture f = MoverFixture.coordinatedBy(coordinator)
                .generate(2_000, 2)
                .set("mover.workers", "1")
                .set("mover.pageSize", "100")
                .set("mover.leaseTtl", "2s")) {
            StallOnce stall = new StallOnce(3);
            MoverProcess a = f.process(PhaseHooks.NONE, List.of(stall));
            var ra = f.start(a);
            assertThat(stall.stalled.await(60, TimeUnit.SECONDS)).isTrue();

            MoverProcess b = f.process(PhaseHooks.NONE, List.of());
            assertThat(f.start(b).get(120, TimeUnit.SECONDS)).isEqualTo(RunStatus.FINISHED);

            String id = stall.firstId.get();
            try (Connection c = f.services.postgres();
                    PreparedStatement ps = c.prepareStatement("DELETE FROM " + f.table + " WHERE id = ?")) {
                ps.setString(1, id);
                assertThat(ps.executeUpdate()).isEqualTo(1);
            }
            f.dynamo(List.of()).deleteItem(d -> d.tableName(f.table).key(Map.of("id", AttributeValue.fromS(id))));

            stall.release.countDown(); // the stalled worker wakes up with a page it no longer has the lease for
            assertThat(ra.get(60, TimeUnit.SECONDS)).isEqualTo(RunStatus.FINISHED);
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> stall.after.get() > 0);

            assertThat(stall.sent.get()).as("requests sent after the stall").isZero();
            assertThat(a.counters().leasesLost()).isEqualTo(1);
            assertThat(f.differences())
                    .as("the deleted row stays deleted; every other row is exact")
                    .isEmpty();
        }
    }

    /**
     * Stalls the {@code nth} BatchWriteItem before it is sent until released (ignoring interrupts, as a paused process
     * would), and counts the attempts of that call that got past every later check and were sent.
     */
    static final class StallOnce implements ExecutionInterceptor {
        final CountDownLatch stalled = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final AtomicReference<String> firstId = new AtomicReference<>();
        final AtomicInteger after = new AtomicInteger();
        final AtomicInteger sent = new AtomicInteger();
        private final AtomicInteger calls = new AtomicInteger();
        private final int nth;
        private volatile Thread stalledThread;

        StallOnce(int nth) {
            this.nth = nth;
        }

        @Override
        public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
            if (!(context.request() instanceof BatchWriteItemRequest r)) return;
            if (Thread.currentThread() == stalledThread) {
                after.incrementAndGet();
                return;
            }
            if (calls.incrementAndGet() != nth) return;
            firstId.set(r.requestItems()
                    .values()
                    .iterator()
                    .next()
                    .get(0)
                    .putRequest()
                    .item()
                    .get("id")
                    .s());
            stalledThread = Thread.currentThread();
            stalled.countDown();
            Paused.until(release);
            after.incrementAndGet();
        }

        @Override
        public void afterTransmission(Context.AfterTransmission context, ExecutionAttributes attributes) {
            if (Thread.currentThread() == stalledThread) sent.incrementAndGet();
        }
    }
}
