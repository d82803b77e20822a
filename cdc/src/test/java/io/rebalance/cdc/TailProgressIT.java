package io.rebalance.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.protocol.handoff.Lsn;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.keyspace.TailKeys;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.UnifiedJedis;

/**
 * What other commands wait on: once a running tail's published position passes a WAL position, every change
 * committed before it is in DynamoDB, with no further wait; heartbeats move the position on an idle table; and
 * without a running tail the wait says so at once instead of waiting out its bound. The cutover's catch-up wait gives
 * a tail that keeps moving the time it needs and gives up on one that stands still or runs past the limit.
 */
class TailProgressIT {
    @Test
    void thePublishedPositionBoundsWhatIsInDynamoDb() throws Exception {
        try (TailFixture f = new TailFixture()) {
            f.set("tail.heartbeat", "500ms");
            TailProgress progress =
                    new TailProgress(f.redis, f.config().redis().keyspace().tail());
            assertThat(progress.awaitApplied(1, Duration.ofMinutes(1)))
                    .as("no tail runs")
                    .isFalse();

            List<Future<?>> outcomes = new ArrayList<>();
            Tail tail = f.startTail("tail-progress", outcomes);
            f.awaitStreaming();
            for (int round = 1; round <= 5; round++) {
                for (int i = 0; i < 40; i++) f.insert(ChangeKindsIT.id(round * 100 + i), "message", null, i);
                f.sql("DELETE FROM " + f.table + " WHERE id = '" + ChangeKindsIT.id(round * 100) + "'");
                long committed = Lsn.parse(currentLsn(f));
                assertThat(progress.awaitApplied(committed, Duration.ofSeconds(60)))
                        .isTrue();
                // read right away, no waiting: the position promised these are there
                assertThat(f.item(ChangeKindsIT.id(round * 100 + 39))).isNotEmpty();
                assertThat(f.item(ChangeKindsIT.id(round * 100))).isEmpty();
            }
            // nothing changes in the table now: heartbeats alone carry the position past the server's
            long idle = Lsn.parse(currentLsn(f));
            assertThat(progress.awaitApplied(idle, Duration.ofSeconds(30))).isTrue();
            assertThat(tail.stats().appliedLsn()).isGreaterThanOrEqualTo(idle);
            assertThat(outcomes).noneMatch(Future::isDone);
        }
    }

    /**
     * The test plays a tail that publishes its status every 20 ms: {@code step} is how far its applied position moves
     * at each publication (0: it stands still).
     */
    private static ScheduledExecutorService publishing(
            UnifiedJedis redis, TailKeys keys, AtomicLong applied, long step) {
        redis.set(keys.lease(), "played-tail");
        Runnable publish = () -> redis.hset(
                keys.status(),
                Map.of(
                        "updated_ms", Long.toString(System.currentTimeMillis()),
                        "applied_lsn", Lsn.text(applied.addAndGet(step))));
        publish.run(); // running from the first read on
        ScheduledExecutorService tail = Executors.newSingleThreadScheduledExecutor();
        tail.scheduleAtFixedRate(publish, 20, 20, TimeUnit.MILLISECONDS);
        return tail;
    }

    @Test
    void theCatchUpWaitFollowsATailThatMovesAndGivesUpOnOneThatStandsStill() throws Exception {
        SharedServices services = SharedServices.get();
        TailKeys keys = new Keyspace(SharedServices.unique("catchup") + ":").tail();
        try (UnifiedJedis redis = services.redis()) {
            TailProgress progress = new TailProgress(redis, keys);
            TailProgress.CatchUp none = progress.awaitCatchUp(1, Duration.ofMinutes(1), Duration.ofMinutes(1));
            assertThat(none.reached()).isFalse();
            assertThat(none.why()).isEqualTo("no tail is running");

            // moving: 200 steps of 1,000 bytes take about 4 s, longer than the stall bound, and it is waited for
            AtomicLong applied = new AtomicLong(1_000_000);
            ScheduledExecutorService moving = publishing(redis, keys, applied, 1_000);
            try {
                TailProgress.CatchUp caught =
                        progress.awaitCatchUp(1_200_000, Duration.ofSeconds(1), Duration.ofMinutes(1));
                assertThat(caught.reached()).as(caught.why()).isTrue();
                assertThat(caught.applied()).isGreaterThanOrEqualTo(1_200_000);

                // still moving, but the limit comes first
                TailProgress.CatchUp late =
                        progress.awaitCatchUp(Long.MAX_VALUE / 2, Duration.ofMinutes(1), Duration.ofMillis(500));
                assertThat(late.reached()).isFalse();
                assertThat(late.why()).startsWith("it was still catching up after");
            } finally {
                moving.shutdownNow();
                moving.awaitTermination(5, TimeUnit.SECONDS);
            }

            // publishing, but its applied position stands still: given up on after the stall bound, not the limit
            ScheduledExecutorService still = publishing(redis, keys, applied, 0);
            try {
                long at = applied.get();
                TailProgress.CatchUp stuck =
                        progress.awaitCatchUp(at + 1, Duration.ofMillis(300), Duration.ofMinutes(1));
                assertThat(stuck.reached()).isFalse();
                assertThat(stuck.applied()).isEqualTo(at);
                assertThat(stuck.why()).isEqualTo("its applied position stood still for 0 s");
            } finally {
                still.shutdownNow();
                still.awaitTermination(5, TimeUnit.SECONDS);
                redis.del(keys.status(), keys.lease());
            }
        }
    }

    private static String currentLsn(TailFixture f) throws Exception {
        try (Connection c = f.services.postgres();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT pg_current_wal_lsn()::text")) {
            rs.next();
            return rs.getString(1);
        }
    }
}
