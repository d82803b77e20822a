package io.rebalance.core.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.exceptions.JedisConnectionException;

class RetrierTest {
    private final List<Duration> waits = new ArrayList<>();
    private final Retrier retrier = new Retrier(
            new Backoff(Duration.ofMillis(100), Duration.ofSeconds(1), 5, Duration.ofMinutes(1)), waits::add);

    @Test
    void transientFailuresAreRetriedWithGrowingCappedJitteredWaits() {
        AtomicInteger calls = new AtomicInteger();
        String result = retrier.call("op", () -> {
            if (calls.incrementAndGet() < 4) throw new JedisConnectionException("down");
            return "ok";
        });
        assertThat(result).isEqualTo("ok");
        assertThat(waits).hasSize(3);
        for (int i = 0; i < waits.size(); i++)
            assertThat(waits.get(i).toMillis()).isLessThan(Math.min(1000, 100L << i));
    }

    @Test
    void permanentFailuresAreNotRetried() {
        AtomicInteger calls = new AtomicInteger();
        assertThatThrownBy(() -> retrier.call("op", () -> {
                    calls.incrementAndGet();
                    throw new RebalanceException(ErrorCode.ROW_REFUSED, "no");
                }))
                .isInstanceOf(RebalanceException.class);
        assertThatThrownBy(() -> retrier.call("op", () -> {
                    calls.incrementAndGet();
                    throw new SQLException("relation does not exist", "42P01");
                }))
                .hasCauseInstanceOf(SQLException.class);
        assertThat(calls.get()).isEqualTo(2);
    }

    @Test
    void retriesStopAfterTheAttemptBudget() {
        AtomicInteger calls = new AtomicInteger();
        assertThatThrownBy(() -> retrier.call("op", () -> {
                    calls.incrementAndGet();
                    throw new SQLException("terminating connection due to administrator command", "57P01");
                }))
                .isInstanceOf(Retrier.RetriesExhausted.class);
        assertThat(calls.get()).isEqualTo(5);
    }
}
