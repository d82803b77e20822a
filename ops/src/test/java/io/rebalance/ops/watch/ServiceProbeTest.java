package io.rebalance.ops.watch;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.config.ConfigLoader;
import io.rebalance.testkit.SharedServices;
import java.time.Duration;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.UnifiedJedis;

/**
 * Readiness never reports a service up because it once answered: when the next question does not come back (it
 * hangs on a service that stopped replying), the last answer goes stale and the check turns down.
 */
class ServiceProbeTest {
    @Test
    void anAnswerOlderThanItsFreshnessIsNoAnswer() throws Exception {
        try (UnifiedJedis redis = SharedServices.get().redis();
                ServiceProbe probe = new ServiceProbe(
                        redis, new ConfigLoader(Map.of()).load(null, Map.of()).source(), Duration.ofMillis(300))) {
            assertThat(probe.redis().up()).as("not asked yet").isFalse();
            probe.askRedis();
            assertThat(probe.redis().up()).isTrue();
            // no question answered since, as when the asking thread hangs on a silent Redis: it turns down by itself
            Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> !probe.redis()
                    .up());
            assertThat(probe.redis().detail()).startsWith("has not answered for");
            probe.askRedis();
            assertThat(probe.redis().up()).isTrue();
        }
    }
}
