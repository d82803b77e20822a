package io.rebalance.mover;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.copy.RunStatus;
import io.rebalance.testkit.TcpProxy;
import java.net.URI;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.core.SdkResponse;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemResponse;
import software.amazon.awssdk.services.dynamodb.model.ProvisionedThroughputExceededException;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/** Each service misbehaving in the middle of a copy; each run must still end complete and exact. */
class FaultsIT {

    @Test
    void postgresBackendsTerminatedMidCopy() throws Exception {
        try (MoverFixture f = new MoverFixture()
                .generate(20_000, 20)
                .set("mover.workers", "2")
                .set("mover.pageSize", "200")) {
            AtomicInteger terminated = new AtomicInteger();
            AtomicInteger killsDuringCopy = new AtomicInteger();
            RunState run = f.runState();
            // terminate the copy's backends on every few pages, at random points of their queries
            PhaseHooks killer = (phase, slot, owner) -> {
                if (phase == Phase.PROGRESS_SAVED && terminated.get() < 12 && Math.random() < 0.3) {
                    try (Connection c = f.services.postgres();
                            Statement st = c.createStatement();
                            ResultSet rs = st.executeQuery(
                                    "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))"
                                            + " FROM pg_stat_activity WHERE application_name = 'rebalance' AND pid <> pg_backend_pid()")) {
                        rs.next();
                        terminated.addAndGet(rs.getInt(1));
                        if (run.rowsCopied() < 20_000) killsDuringCopy.incrementAndGet();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }
            };
            MoverProcess p = f.process(killer, List.of());
            assertThat(f.start(p).get(120, TimeUnit.SECONDS)).isEqualTo(RunStatus.FINISHED);
            assertThat(terminated.get()).isGreaterThan(3);
            assertThat(killsDuringCopy.get()).isPositive();
            assertThat(f.differences()).isEmpty();
        }
    }

    @Test
    void redisUnreachableForTenSeconds() throws Exception {
        MoverFixture f = new MoverFixture().generate(10_000, 12);
        URI redis = URI.create(f.services.redisUrl);
        try (f;
                TcpProxy proxy = new TcpProxy(redis.getHost(), redis.getPort())) {
            f.set("redis.url", "redis://127.0.0.1:" + proxy.port())
                    .set("mover.workers", "2")
                    .set("mover.pageSize", "100");
            AtomicBoolean cutDone = new AtomicBoolean();
            AtomicBoolean restored = new AtomicBoolean();
            var outage = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
            PhaseHooks cutOnce = (phase, slot, owner) -> {
                if (phase == Phase.PROGRESS_SAVED && cutDone.compareAndSet(false, true)) {
                    proxy.cut(); // ten seconds of no Redis, starting in the middle of the copy
                    outage.schedule(
                            () -> {
                                restored.set(true);
                                proxy.restore();
                            },
                            10,
                            TimeUnit.SECONDS);
                }
            };
            MoverProcess p = f.process(cutOnce, List.of());
            assertThat(f.start(p).get(180, TimeUnit.SECONDS)).isEqualTo(RunStatus.FINISHED);
            assertThat(cutDone).isTrue();
            assertThat(restored)
                    .as("the copy outlasted the outage, so it ran into it")
                    .isTrue();
            outage.shutdown();
            f.set("redis.url", f.services.redisUrl);
            assertThat(f.differences()).isEmpty();
            assertThat(f.runState().rowsCopied()).isGreaterThanOrEqualTo(10_000);
        }
    }

    @Test
    void dynamoThrottlingAndUnprocessedItems() throws Exception {
        try (MoverFixture f = new MoverFixture()
                .generate(10_000, 10)
                .set("mover.workers", "2")
                .set("mover.pageSize", "250")) {
            Throttler throttler = new Throttler();
            MoverProcess p = f.process(PhaseHooks.NONE, List.of(throttler));
            assertThat(f.start(p).get(120, TimeUnit.SECONDS)).isEqualTo(RunStatus.FINISHED);
            assertThat(throttler.throttled.get()).isGreaterThan(10);
            assertThat(throttler.unprocessed.get()).isGreaterThan(10);
            assertThat(f.differences()).isEmpty();
        }
    }

    /**
     * The fault DynamoDB Local cannot produce on demand: every 4th BatchWriteItem fails with throttling before it is
     * sent, and every 5th one that is written reports half its items as unprocessed (they are written, but the
     * client must resubmit them, as it must when DynamoDB really throttles part of a batch).
     */
    static final class Throttler implements ExecutionInterceptor {
        final AtomicInteger calls = new AtomicInteger();
        final AtomicInteger throttled = new AtomicInteger();
        final AtomicInteger unprocessed = new AtomicInteger();

        @Override
        public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
            if (context.request() instanceof BatchWriteItemRequest && calls.incrementAndGet() % 4 == 0) {
                throttled.incrementAndGet();
                throw ProvisionedThroughputExceededException.builder()
                        .statusCode(400)
                        .awsErrorDetails(AwsErrorDetails.builder()
                                .errorCode("ProvisionedThroughputExceededException")
                                .errorMessage("injected by FaultsIT")
                                .build())
                        .build();
            }
        }

        @Override
        public SdkResponse modifyResponse(Context.ModifyResponse context, ExecutionAttributes attributes) {
            if (context.request() instanceof BatchWriteItemRequest req
                    && calls.get() % 5 == 0
                    && unprocessed.get() < 200) {
                unprocessed.incrementAndGet();
                Map.Entry<String, List<WriteRequest>> e =
                        req.requestItems().entrySet().iterator().next();
                List<WriteRequest> half = e.getValue().subList(0, (e.getValue().size() + 1) / 2);
                return ((BatchWriteItemResponse) context.response())
                        .toBuilder().unprocessedItems(Map.of(e.getKey(), half)).build();
            }
            return context.response();
        }
    }
}
