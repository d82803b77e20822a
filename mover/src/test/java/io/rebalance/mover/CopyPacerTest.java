package io.rebalance.mover;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.PutRequest;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * One call in sixteen asks DynamoDB what it consumed; the others count their estimate scaled by what the asked ones
 * reported against theirs, so the figure the copy reports follows DynamoDB's word, not the estimate alone. A stop
 * ends a batch's wait for its turn at once.
 */
class CopyPacerTest {
    /** No rows limit and no write-unit budget: what a copy without `rate` runs with. */
    private final CopyPacer pacer =
            new CopyPacer(new GlobalRateLimiter(rows -> new RateWindows.Window(rows, 1000), 0), new NoBudget(), "");

    @Test
    void oneCallInSixteenIsMeteredAndTheOthersAreScaledByWhatItReported() throws Exception {
        List<WriteRequest> batch = batch(25); // 25 small items: 25 units estimated
        int metered = 0;
        for (int call = 0; call < 64; call++) {
            long reserved = pacer.acquire(batch);
            assertThat(reserved).isEqualTo(25);
            boolean asks = pacer.meters();
            if (asks) metered++;
            // DynamoDB says each call cost twice the estimate (say, every item overwrote one twice its size)
            pacer.settled(reserved, asks ? 50.0 : Double.NaN, false);
        }
        assertThat(metered).isEqualTo(64 / CopyPacer.METER_EVERY);
        assertThat(pacer.consumed()).isEqualTo(64 * 50.0);
    }

    @Test
    void beforeAnyCallIsMeteredTheEstimateIsCounted() throws Exception {
        List<WriteRequest> batch = batch(10);
        pacer.settled(pacer.acquire(batch), Double.NaN, false);
        assertThat(pacer.consumed()).isEqualTo(10.0);
    }

    @Test
    void aStopEndsAWaitForTheRateLimitAtOnceAndEveryLaterOne() throws Exception {
        // every second's budget is spent for the next minute: a batch waits, as under a low `rebalance rate`
        CopyPacer limited = new CopyPacer(
                new GlobalRateLimiter(rows -> new RateWindows.Window(1_000_000, 60_000), 10), new NoBudget(), "");
        CompletableFuture<Throwable> waited = new CompletableFuture<>();
        Thread worker = new Thread(() -> {
            try {
                limited.acquire(batch(25));
                waited.complete(null);
            } catch (Throwable t) {
                waited.complete(t);
            }
        });
        worker.start();
        await().until(() -> worker.getState() == Thread.State.TIMED_WAITING);
        limited.stop(); // SIGTERM
        assertThat(waited.get(5, TimeUnit.SECONDS))
                .isInstanceOf(InterruptedException.class)
                .hasMessageContaining("not sent");
        assertThatThrownBy(() -> limited.acquire(batch(1))).isInstanceOf(InterruptedException.class);
    }

    private static List<WriteRequest> batch(int n) {
        List<WriteRequest> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(WriteRequest.builder()
                    .putRequest(PutRequest.builder()
                            .item(Map.of("id", AttributeValue.fromS("k" + i)))
                            .build())
                    .build());
        }
        return out;
    }

    /** The run has no budget: reservations are not taken. */
    private static final class NoBudget implements WriteUnitBudget {
        @Override
        public Snapshot setCeiling(long unitsPerSecond) {
            return Snapshot.NONE;
        }

        @Override
        public void startCeiling(long unitsPerSecond) {}

        @Override
        public Reservation take(long units) {
            throw new AssertionError("no budget: nothing is reserved");
        }

        @Override
        public Snapshot report(double consumed, double correction, boolean throttled) {
            return Snapshot.NONE;
        }

        @Override
        public Snapshot read() {
            return Snapshot.NONE;
        }

        @Override
        public OnDemandRamp.State ramp() {
            return null;
        }

        @Override
        public void startRamp(double warm) {}

        @Override
        public void saveRamp(OnDemandRamp.State s, double cap) {}
    }
}
