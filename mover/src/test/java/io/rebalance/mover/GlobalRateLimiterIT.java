package io.rebalance.mover;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.testkit.SharedServices;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.UnifiedJedis;

class GlobalRateLimiterIT {
    @Test
    void limitersSharingAPrefixTogetherNeverGoFasterThanTheLimit() throws Exception {
        String prefix = SharedServices.unique("rl") + ":";
        try (UnifiedJedis a = SharedServices.get().redis();
                UnifiedJedis b = SharedServices.get().redis()) {
            // two processes' limiters, 500 rows/s between them, asked for 1,500 rows in batches of 25
            List<GlobalRateLimiter> limiters = List.of(
                    new GlobalRateLimiter(a, new Keyspace(prefix).run(), 500),
                    new GlobalRateLimiter(b, new Keyspace(prefix).run(), 500));
            long start = System.nanoTime();
            List<Thread> threads = new ArrayList<>();
            for (GlobalRateLimiter l : limiters) {
                Thread t = new Thread(() -> {
                    try {
                        for (int i = 0; i < 30; i++) l.acquire(25);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
                t.start();
                threads.add(t);
            }
            for (Thread t : threads) t.join();
            double seconds = (System.nanoTime() - start) / 1e9;
            // 1,500 rows at 500/s span at least three one-second windows: more than two seconds minus the first partial
            // one
            assertThat(seconds).isGreaterThan(1.0);
        }
    }

    @Test
    void zeroMeansNoLimitAndANewLimitAppliesToTheNextBatch() throws Exception {
        String prefix = SharedServices.unique("rl") + ":";
        try (UnifiedJedis r = SharedServices.get().redis()) {
            GlobalRateLimiter l = new GlobalRateLimiter(r, new Keyspace(prefix).run(), 0);
            for (int i = 0; i < 1000; i++) l.acquire(25); // 25,000 rows, no Redis call, no wait
            assertThat(io.rebalance.core.redis.RedisScan.keys(r, prefix)).isEmpty();
            l.setLimit(100);
            l.acquire(25);
            assertThat(io.rebalance.core.redis.RedisScan.keys(r, prefix))
                    .singleElement()
                    .asString()
                    .contains("rate:");
        }
    }
}
