package io.rebalance.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.dynamo.DynamoClients;
import io.rebalance.testkit.RoomEventsComparison;
import io.rebalance.testkit.TcpProxy;
import java.net.URI;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The tail outlives its services going away mid-stream, with changes made all along, and ends exact. A proxy cuts
 * the tail's own connections and refuses new ones, while the test keeps writing to Postgres directly: to the tail
 * this is what a restarted Postgres (its replication connection and queries dropped, then refused) or an
 * unreachable DynamoDB looks like, and the source keeps taking writes meanwhile, as it would.
 */
class TailFaultsIT {
    @Test
    void postgresGoneForTenSecondsMidStream() throws Exception {
        try (TailFixture f = new TailFixture().set("tail.maxBatch", "16")) { // the backlog drains overlapped
            URI pg = URI.create(f.services.jdbcUrl.substring("jdbc:".length()));
            try (TcpProxy proxy = new TcpProxy(pg.getHost(), pg.getPort())) {
                f.set(
                        "source.jdbcUrl",
                        f.services.jdbcUrl.replace(pg.getHost() + ":" + pg.getPort(), "127.0.0.1:" + proxy.port()));
                List<Future<?>> outcomes = new ArrayList<>();
                f.startTail("tail-pg-fault", outcomes);
                f.awaitStreaming();
                changes(f, 1);
                f.awaitItem(ChangeKindsIT.id(199), true);
                Integer walSender = slot(f).activePid();

                int rounds = outage(proxy, Duration.ofSeconds(10), f, 2);
                changes(f, rounds + 1);
                f.awaitItem(ChangeKindsIT.id((rounds + 1) * 100 + 99), true);
                assertExact(f);
                assertThat(slot(f).activePid())
                        .as("the tail reads the slot through a new replication connection")
                        .isNotNull()
                        .isNotEqualTo(walSender);
                assertThat(outcomes).noneMatch(Future::isDone);
            }
        }
    }

    @Test
    void dynamoDbGoneForThirtySecondsMidStream() throws Exception {
        try (TailFixture f = new TailFixture().set("tail.maxBatch", "16")) { // the backlog drains overlapped
            URI dynamo = URI.create(f.services.dynamo.endpoint());
            try (TcpProxy proxy = new TcpProxy(dynamo.getHost(), dynamo.getPort());
                    DynamoDbClient proxied = DynamoClients.create(
                            f.config().target(), "http://127.0.0.1:" + proxy.port(), 16, List.of())) {
                List<Future<?>> outcomes = new ArrayList<>();
                Tail tail = f.startTail("tail-dynamo-fault", outcomes, proxied);
                f.awaitStreaming();
                changes(f, 1);
                f.awaitItem(ChangeKindsIT.id(199), true);

                int rounds = outage(proxy, Duration.ofSeconds(30), f, 2);
                changes(f, rounds + 1);
                f.awaitItem(ChangeKindsIT.id((rounds + 1) * 100 + 99), true);
                assertExact(f);
                assertThat(tail.stats().applyRetries())
                        .as("batches were retried")
                        .isPositive();
                assertThat(outcomes).noneMatch(Future::isDone);
            }
        }
    }

    /**
     * Cuts the proxy for {@code length} and writes rounds of changes to Postgres (directly) all the while.
     *
     * @return the last round written
     */
    private static int outage(TcpProxy proxy, Duration length, TailFixture f, int firstRound) throws Exception {
        AtomicBoolean over = new AtomicBoolean();
        ScheduledExecutorService clock = Executors.newSingleThreadScheduledExecutor();
        proxy.cut();
        clock.schedule(
                () -> {
                    proxy.restore();
                    over.set(true);
                },
                length.toMillis(),
                TimeUnit.MILLISECONDS);
        int r = firstRound;
        try {
            for (; !over.get(); r++) changes(f, r);
        } finally {
            clock.shutdown();
        }
        return r - 1;
    }

    /** Round {@code r}: 100 inserts (ids r*100..r*100+99), updates of the previous round, deletes of a few. */
    static void changes(TailFixture f, int r) throws Exception {
        for (int i = 0; i < 100; i++) f.insert(ChangeKindsIT.id(r * 100 + i), "message", "{\"r\":" + r + "}", i);
        if (r > 1) {
            int prev = (r - 1) * 100;
            f.sql(
                    "UPDATE " + f.table + " SET kind = 'edited-" + r + "', data = '{\"edit\":" + r + "}'"
                            + " WHERE id BETWEEN '" + ChangeKindsIT.id(prev) + "' AND '" + ChangeKindsIT.id(prev + 49)
                            + "'",
                    "DELETE FROM " + f.table + " WHERE id BETWEEN '" + ChangeKindsIT.id(prev + 50) + "' AND '"
                            + ChangeKindsIT.id(prev + 59) + "'");
        }
    }

    private static TailPreflight.SlotInfo slot(TailFixture f) throws Exception {
        try (Connection c = f.services.postgres()) {
            return TailPreflight.slot(c, f.slotName);
        }
    }

    static void assertExact(TailFixture f) throws Exception {
        try (Connection pg = f.services.postgres()) {
            Awaitility.await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(
                            RoomEventsComparison.differences(pg, f.table, f.dynamo, f.table))
                    .isEmpty());
        }
    }
}
