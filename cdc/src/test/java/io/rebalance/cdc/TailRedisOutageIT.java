package io.rebalance.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.redis.RedisConnector;
import io.rebalance.testkit.PrivateRedis;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Future;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.UnifiedJedis;

/**
 * The tail rides out a Redis outage of any length. Its Redis (with an append-only file, as scripts/services.sh runs
 * it) is killed for more than twice the tail's lease TTL while changes are made to Postgres all along, then started
 * from its append-only file. The same tail process goes on: it stood by once its lease lapsed, took the lease back
 * with a new token, and applies every change. Before, the standby loop's first call to Redis ended the tail with exit
 * 70 ("unexpected failure: JedisConnectionException").
 */
class TailRedisOutageIT {
    @Test
    void redisKilledForTwiceTheLeaseThenRestartedFromItsAppendOnlyFile() throws Exception {
        try (PrivateRedis own = PrivateRedis.start("--appendonly", "yes");
                TailFixture f = new TailFixture();
                UnifiedJedis redis = RedisConnector.connect(own.url, 16)) {
            f.set("redis.url", own.url);
            Duration ttl = f.config().tail().leaseTtl();
            Tail tail = new Tail(f.config(), f.sourceTable(), f.dynamo, redis, "tail-redis-outage");
            f.tails.add(tail);
            List<Future<?>> outcomes = new ArrayList<>();
            outcomes.add(f.threads.submit(() -> {
                tail.run();
                return null;
            }));
            f.awaitStreaming();
            TailFaultsIT.changes(f, 1);
            f.awaitItem(ChangeKindsIT.id(199), true);
            String before = redis.get(tail.keys().lease());

            own.kill();
            long until = System.currentTimeMillis() + 2 * ttl.toMillis() + 2_000;
            int r = 2;
            for (; System.currentTimeMillis() < until; r++) TailFaultsIT.changes(f, r); // changes all through it
            own.startAgain();
            TailFaultsIT.changes(f, r);
            f.awaitItem(ChangeKindsIT.id(r * 100 + 99), true);
            TailFaultsIT.assertExact(f);

            assertThat(outcomes).as("the same tail goes on").noneMatch(Future::isDone);
            assertThat(tail.stats().leaseLapses())
                    .as("it lost its lease to the outage")
                    .isPositive();
            Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                String now = redis.get(tail.keys().lease());
                assertThat(now).startsWith("tail-redis-outage#").isNotEqualTo(before);
            });
            Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(
                            redis.hget(tail.keys().status(), "lease_lapses"))
                    .isNotNull()
                    .isNotEqualTo("0"));
        }
    }
}
