package io.rebalance.mover;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.copy.RunStatus;
import io.rebalance.core.dynamo.DynamoCounts;
import io.rebalance.testkit.TcpProxy;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.core.SdkResponse;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttribute;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.SdkHttpResponse;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemResponse;
import software.amazon.awssdk.services.dynamodb.model.ProvisionedThroughputExceededException;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/** Each service misbehaving in the middle of a copy; each run must still end complete and exact. */
class FaultsIT {

    /** With the Postgres coordinator its sessions are terminated too: the copy's state is in the same database. */
    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void postgresBackendsTerminatedMidCopy(String coordinator) throws Exception {
        try (MoverFixture f = MoverFixture.coordinatedBy(coordinator)
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
                            ResultSet rs =
                                    st.executeQuery("SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM"
                                            + " pg_stat_activity WHERE application_name LIKE 'rebalance%' AND pid"
                                            + " <> pg_backend_pid()")) {
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

    /** Redis, or the Postgres the coordinator's tables are in, cut off while the source stays reachable. */
    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void coordinatorUnreachableForTenSeconds(String coordinator) throws Exception {
        MoverFixture f = MoverFixture.coordinatedBy(coordinator).generate(10_000, 12);
        URI at = URI.create(
                coordinator.equals("redis") ? f.services.redisUrl : f.services.jdbcUrl.substring("jdbc:".length()));
        try (f;
                TcpProxy proxy = new TcpProxy(at.getHost(), at.getPort())) {
            if (coordinator.equals("redis")) f.set("redis.url", "redis://127.0.0.1:" + proxy.port());
            else
                f.set(
                        "coordinator.jdbcUrl",
                        f.services.jdbcUrl.replace(":" + at.getPort() + "/", ":" + proxy.port() + "/"));
            f.set("mover.workers", "2").set("mover.pageSize", "100");
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
            if (coordinator.equals("redis")) f.set("redis.url", f.services.redisUrl);
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
            long unprocessedBefore = DynamoCounts.process().unprocessedItems();
            MoverProcess p = f.process(PhaseHooks.NONE, List.of(throttler));
            assertThat(f.start(p).get(120, TimeUnit.SECONDS)).isEqualTo(RunStatus.FINISHED);
            assertThat(throttler.throttled.get()).isGreaterThan(10);
            assertThat(throttler.unprocessed.get()).isGreaterThan(10);
            assertThat(f.differences()).isEmpty();
            // the metrics count every item handed back (each batch returned at least one)
            assertThat(DynamoCounts.process().unprocessedItems() - unprocessedBefore)
                    .isGreaterThanOrEqualTo(throttler.unprocessed.get());
        }
    }

    @Test
    void throttledRepliesAreRetriedAndCounted() throws Exception {
        try (MoverFixture f =
                new MoverFixture().generate(4_000, 4).set("mover.workers", "2").set("mover.pageSize", "250")) {
            ThrottledReplies replies = new ThrottledReplies();
            long before = DynamoCounts.process().throttled();
            MoverProcess p = f.process(PhaseHooks.NONE, List.of(replies));
            assertThat(f.start(p).get(120, TimeUnit.SECONDS)).isEqualTo(RunStatus.FINISHED);
            assertThat(replies.throttled.get()).isGreaterThan(5);
            assertThat(f.differences()).isEmpty();
            // each throttled attempt is counted once, as DynamoDB's own reply would be (the SDK's attempt metrics)
            assertThat(DynamoCounts.process().throttled() - before).isGreaterThanOrEqualTo(replies.throttled.get());
        }
    }

    /**
     * DynamoDB's throttling reply as it arrives on the wire, which DynamoDB Local never sends: every 3rd
     * BatchWriteItem attempt's reply becomes HTTP 400 with a ProvisionedThroughputExceededException body (the items
     * were written; the client does not know and must send them again).
     */
    static final class ThrottledReplies implements ExecutionInterceptor {
        private static final ExecutionAttribute<Boolean> REPLACED = new ExecutionAttribute<>("throttled-reply");
        final AtomicInteger attempts = new AtomicInteger();
        final AtomicInteger throttled = new AtomicInteger();

        @Override
        public SdkHttpResponse modifyHttpResponse(Context.ModifyHttpResponse context, ExecutionAttributes attributes) {
            boolean replace = context.request() instanceof BatchWriteItemRequest
                    && attempts.incrementAndGet() % 3 == 0
                    && throttled.get() < 40;
            attributes.putAttribute(REPLACED, replace);
            if (!replace) return context.httpResponse();
            throttled.incrementAndGet();
            return context.httpResponse().toBuilder()
                    .statusCode(400)
                    .removeHeader("x-amz-crc32")
                    .removeHeader("Content-Length")
                    .putHeader("Content-Type", "application/x-amz-json-1.0")
                    .build();
        }

        @Override
        public Optional<InputStream> modifyHttpResponseContent(
                Context.ModifyHttpResponse context, ExecutionAttributes attributes) {
            if (!Boolean.TRUE.equals(attributes.getAttribute(REPLACED))) return context.responseBody();
            context.responseBody()
                    .ifPresent(
                            real -> { // read to its end, or its pooled connection is never freed
                                try (real) {
                                    real.readAllBytes();
                                } catch (java.io.IOException e) {
                                    throw new java.io.UncheckedIOException(e);
                                }
                            });
            return Optional.of(new ByteArrayInputStream(("{\"__type\":\"com.amazonaws.dynamodb.v20120810#"
                            + "ProvisionedThroughputExceededException\",\"message\":\"injected by FaultsIT\"}")
                    .getBytes(StandardCharsets.UTF_8)));
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
