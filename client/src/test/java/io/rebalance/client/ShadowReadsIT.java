package io.rebalance.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.route.RouteStatus;
import io.rebalance.protocol.route.RoutingTable;
import io.rebalance.protocol.shadow.ShadowLog;
import io.rebalance.protocol.shadow.ShadowOutcome;
import io.rebalance.testkit.SharedServices;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.UnifiedJedis;

/**
 * The shadow read never reaches the application's read: one that fails, one that hangs past its timeout and one that
 * finds the queue full leave the route's answer and its return untouched, and are counted as errors and skipped.
 * The faults are injected in the application's read functions (a store does not fail or hang on demand); Redis is
 * real.
 */
class ShadowReadsIT {
    private static final String SCOPE = "room_events";

    private final SharedServices services = SharedServices.get();
    private final UnifiedJedis redis = services.redis();
    private final String prefix = SharedServices.unique("shadow") + ":";
    private final ShadowLog log = new ShadowLog(redis, new Keyspace(prefix));
    /** Released when the test ends: reads that hang wait on it. */
    private final CountDownLatch end = new CountDownLatch(1);

    @AfterEach
    void release() {
        end.countDown();
        redis.close();
    }

    private Router router(ShadowReads shadows) {
        RoutingTable routes = new RoutingTable(redis, new Keyspace(prefix));
        routes.create(SCOPE, RouteStatus.SOURCE, 1);
        routes.setShadowSample(SCOPE, 1.0); // every read
        return new Router(redis, GuardSettings.defaults(prefix), shadows);
    }

    @Test
    void aShadowReadThatFailsOrHangsIsAnErrorAndTheApplicationsReadIsUntouched() throws Exception {
        AtomicInteger told = new AtomicInteger();
        try (ShadowReads shadows = new ShadowReads(
                redis, prefix, new ShadowSettings(2, 10, Duration.ofMillis(200)), (s, o) -> told.incrementAndGet())) {
            Router router = router(shadows);
            String failing = router.read(
                    SCOPE,
                    null,
                    "a",
                    () -> "row a",
                    () -> {
                        throw new IllegalStateException("DynamoDB refused");
                    },
                    x -> x);
            String hanging = router.read(
                    SCOPE,
                    null,
                    "b",
                    () -> "row b",
                    () -> {
                        end.await(); // past the timeout
                        return "row b";
                    },
                    x -> x);
            assertThat(failing).isEqualTo("row a");
            assertThat(hanging).isEqualTo("row b");
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> told.get() == 2);
            assertThat(log.totals(SCOPE)).containsEntry(ShadowOutcome.ERROR, 2L).containsEntry(ShadowOutcome.MATCH, 0L);
        }
    }

    @Test
    void aFullQueueSkipsTheShadowAndTheReadReturnsAtOnce() throws Exception {
        CountDownLatch firstStarted = new CountDownLatch(1);
        AtomicInteger told = new AtomicInteger();
        // one comparing thread, one waiting place: the first read's shadow hangs, the second waits, the third is
        // skipped
        try (ShadowReads shadows = new ShadowReads(
                redis, prefix, new ShadowSettings(1, 1, Duration.ofSeconds(60)), (s, o) -> told.incrementAndGet())) {
            Router router = router(shadows);
            String first = router.read(
                    SCOPE,
                    null,
                    "a",
                    () -> "row a",
                    () -> {
                        firstStarted.countDown();
                        end.await();
                        return "row a";
                    },
                    x -> x);
            assertThat(firstStarted.await(30, TimeUnit.SECONDS)).isTrue();
            String second = router.read(SCOPE, null, "b", () -> "row b", () -> "row b", x -> x);
            String third = router.read(SCOPE, null, "c", () -> "row c", () -> "row c", x -> x);
            assertThat(first + second + third).isEqualTo("row arow brow c");
            assertThat(told.get())
                    .as("the third, skipped on the application's thread")
                    .isEqualTo(1);
            assertThat(shadows.handedOver()).isEqualTo(3);
            end.countDown(); // the first shadow read returns: the first and second compare, and the skip is counted
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> told.get() == 3);
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> log.totals(SCOPE).get(ShadowOutcome.SKIPPED) == 1L);
            Map<ShadowOutcome, Long> totals = log.totals(SCOPE);
            assertThat(totals).containsEntry(ShadowOutcome.MATCH, 2L).containsEntry(ShadowOutcome.SKIPPED, 1L);
        }
    }

    @Test
    void answersThatDifferAreReadAgainOnceAndAMismatchKeepsBoth() throws Exception {
        AtomicInteger told = new AtomicInteger();
        AtomicInteger postgresReads = new AtomicInteger();
        try (ShadowReads shadows =
                new ShadowReads(redis, prefix, ShadowSettings.defaults(), (s, o) -> told.incrementAndGet())) {
            Router router = router(shadows);
            // a write lands between the route's read and the shadow's: the second reads agree
            router.read(
                    SCOPE,
                    null,
                    "moving",
                    () -> postgresReads.incrementAndGet() == 1 ? "old" : "new",
                    () -> "new",
                    x -> x);
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> told.get() == 1);
            assertThat(postgresReads.get()).as("the route's read and one more").isEqualTo(2);
            // an item that stays different, and a row DynamoDB lacks
            router.read(SCOPE, null, "typed", () -> "N1:5", () -> "S1:5", x -> x);
            router.read(SCOPE, null, "gone", () -> "row", () -> null, x -> x);
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> told.get() == 3);
            assertThat(log.totals(SCOPE))
                    .containsEntry(ShadowOutcome.MATCH, 1L)
                    .containsEntry(ShadowOutcome.MISMATCH, 2L);
            assertThat(log.mismatches(SCOPE, 10))
                    .extracting(m -> m.key() + " " + m.postgres() + " " + m.dynamo())
                    .containsExactlyInAnyOrder("typed N1:5 S1:5", "gone row absent");
        }
    }
}
