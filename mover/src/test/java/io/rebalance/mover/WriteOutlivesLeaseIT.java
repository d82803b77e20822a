package io.rebalance.mover;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rebalance.core.copy.ItemWriter;
import io.rebalance.core.copy.RunStatus;
import io.rebalance.core.dynamo.BatchWriter;
import io.rebalance.core.dynamo.WritePacer;
import io.rebalance.core.retry.Retrier;
import io.rebalance.protocol.lease.LeaseLost;
import io.rebalance.protocol.lease.WriteFence;
import io.rebalance.testkit.Paused;
import java.io.FilterInputStream;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

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
     * A whole process paused (SIGSTOP, a long collector pause) half-way through sending a write: its timers pause with
     * it, so on waking nothing has aborted the call, and the lease's deadline is long past. The test holds the call's
     * timer at a minute (a fence that grants 60 s until it says the lease passed), stalls the body's reading half-way,
     * then says the lease passed and lets it go: the rest of the body, and so the write, must never reach DynamoDB.
     */
    @Test
    void aWriteHalfSentWhenItsProcessPausedLandsNothing() throws Exception {
        try (MoverFixture f = MoverFixture.coordinatedBy("redis").generate(100, 1)) {
            f.process(PhaseHooks.NONE, List.of()); // creates the table
            PausedSend stall = new PausedSend(false);
            AtomicBoolean passed = new AtomicBoolean();
            WriteFence fence = () -> {
                if (passed.get()) throw new LeaseLost("", "the lease passed to another holder");
                return Duration.ofSeconds(60);
            };
            List<WriteRequest> items = new ArrayList<>();
            for (int i = 0; i < 25; i++) items.add(BatchWriter.put(Map.of("id", AttributeValue.fromS("paused-" + i))));
            BatchWriter writer =
                    new BatchWriter(f.dynamo(List.of(stall)), f.table, 25, Retrier.standard(), WritePacer.NONE);
            CompletableFuture<Void> write = CompletableFuture.runAsync(() -> {
                try {
                    writer.apply(items, fence);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            assertThat(stall.stalled.await(60, TimeUnit.SECONDS)).isTrue();
            passed.set(true);
            stall.release.countDown();

            assertThatThrownBy(() -> write.get(60, TimeUnit.SECONDS)).hasRootCauseInstanceOf(LeaseLost.class);
            DynamoDbClient d = f.dynamo(List.of());
            for (WriteRequest request : items) {
                Map<String, AttributeValue> item = request.putRequest().item();
                assertThat(d.getItem(g -> g.tableName(f.table).key(item)).hasItem())
                        .as("item " + item.get("id").s() + " of the half-sent write")
                        .isFalse();
            }
        }
    }

    /**
     * A whole process paused after its write's last byte passed the lease's check and before the HTTP client flushed
     * it: on waking it sends the rest, and the write lands after the lease passed (the bound's stated limit). Five of
     * the batch's rows are deleted during the pause, as the new holder and the tail would see them. The writer finds
     * its lease gone when the call ends, writes the batch's keys again as Postgres holds them now, and reports the
     * loss: no deleted row's item survives. (The call's timer is held off, as a stopped process's is.)
     */
    @Test
    void aWritePausedAfterItsLastCheckHasItsKeysWrittenAgainWhenItsLeaseIsFoundGone() throws Exception {
        try (MoverFixture f = MoverFixture.coordinatedBy("redis").generate(100, 1)) {
            PausedSend pause = new PausedSend(true);
            ItemWriter refresher = f.refresher(List.of(pause));
            AtomicBoolean passed = new AtomicBoolean();
            WriteFence fence = () -> {
                if (passed.get()) throw new LeaseLost("", "the lease passed to another holder");
                return Duration.ofSeconds(60);
            };
            try (Connection c = f.services.postgres()) {
                List<String> ids = new ArrayList<>();
                try (PreparedStatement ps = c.prepareStatement("SELECT id FROM " + f.table + " ORDER BY id LIMIT 25");
                        ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) ids.add(rs.getString(1));
                }
                List<WriteRequest> puts = refresher.read(c, ids).requests();
                CompletableFuture<List<?>> write = CompletableFuture.supplyAsync(() -> {
                    try {
                        return refresher.write(puts, fence, c);
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                });
                assertThat(pause.stalled.await(60, TimeUnit.SECONDS)).isTrue();
                passed.set(true);
                List<String> deleted = ids.subList(0, 5);
                try (PreparedStatement ps = c.prepareStatement("DELETE FROM " + f.table + " WHERE id = ANY (?)")) {
                    ps.setArray(1, c.createArrayOf("text", deleted.toArray()));
                    assertThat(ps.executeUpdate()).isEqualTo(5);
                }
                pause.release.countDown();

                assertThatThrownBy(() -> write.get(60, TimeUnit.SECONDS))
                        .hasRootCauseInstanceOf(LeaseLost.class)
                        .hasMessageContaining("25 keys were written again");
                assertThat(pause.landed.get())
                        .as("the paused write landed, late")
                        .isTrue();
                DynamoDbClient d = f.dynamo(List.of());
                for (String id : ids) {
                    Map<String, AttributeValue> key = Map.of("id", AttributeValue.fromS(id));
                    assertThat(d.getItem(g -> g.tableName(f.table).key(key)).hasItem())
                            .as("item " + id + (deleted.contains(id) ? ", its row deleted in the pause" : ""))
                            .isEqualTo(!deleted.contains(id));
                }
            }
        }
    }

    /**
     * Stalls the first BatchWriteItem while the HTTP client reads its body for the socket (past every check before
     * sending; the signer's earlier read does not count), half-way through or at its last byte (after the lease's
     * check on it passed: FencedWrites, added last, wraps this body), until released; says whether it landed.
     */
    static final class PausedSend implements ExecutionInterceptor {
        final CountDownLatch stalled = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final AtomicBoolean landed = new AtomicBoolean();
        private final boolean atLastByte;
        private volatile Thread sending;
        private volatile Thread paused;

        /** @param atLastByte stall before the last byte, else half-way through */
        PausedSend(boolean atLastByte) {
            this.atLastByte = atLastByte;
        }

        @Override
        public Optional<RequestBody> modifyHttpContent(
                Context.ModifyHttpRequest context, ExecutionAttributes attributes) {
            RequestBody b = context.requestBody().orElseThrow();
            long length = b.optionalContentLength().orElseThrow();
            long at = atLastByte ? length - 1 : length / 2;
            return Optional.of(RequestBody.fromContentProvider(
                    () -> new FilterInputStream(b.contentStreamProvider().newStream()) {
                        private long read;

                        @Override
                        public int read(byte[] buffer, int offset, int n) throws IOException {
                            if (Thread.currentThread() == sending && read >= at) {
                                sending = null;
                                paused = Thread.currentThread();
                                stalled.countDown();
                                Paused.until(release);
                            }
                            int got = super.read(buffer, offset, read < at ? (int) Math.min(n, at - read) : n);
                            if (got > 0) read += got;
                            return got;
                        }
                    },
                    length,
                    b.contentType()));
        }

        @Override
        public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
            if (context.request() instanceof BatchWriteItemRequest && stalled.getCount() > 0)
                sending = Thread.currentThread(); // FencedWrites, last, checks after this
        }

        @Override
        public void afterTransmission(Context.AfterTransmission context, ExecutionAttributes attributes) {
            if (Thread.currentThread() == paused && context.httpResponse().isSuccessful()) landed.set(true);
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
