package io.rebalance.cutover;

import static io.rebalance.cutover.CutoverIT.MATCH;
import static io.rebalance.cutover.CutoverIT.PASS;
import static io.rebalance.cutover.CutoverIT.kind;
import static io.rebalance.cutover.CutoverIT.write;
import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.client.WriteGuard;
import io.rebalance.core.dynamo.DynamoClients;
import io.rebalance.core.route.RouteStatus;
import io.rebalance.testkit.SharedServices;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A rollback reopens Postgres only once it has compared every key applications wrote to DynamoDB since the flip
 * with its row (ADR 9), instead of trusting one reverse-stream round to have seen them: DynamoDB Streams on AWS
 * promises no delivery time.
 */
class RollbackDrainIT {
    private static final Duration DELAY = Duration.ofSeconds(5);

    @Test
    void streamRecordsDelayedFiveSecondsAreWaitedForNotLost() throws Exception {
        AtomicReference<DelayedStreams> delayed = new AtomicReference<>();
        try (CutoverFixture f = new CutoverFixture(SharedServices.get().redisUrl, Duration.ofSeconds(30));
                WriteGuard guard = f.guard()) {
            f.startTail(dynamo -> {
                delayed.set(new DelayedStreams(DynamoClients.streamsOf(dynamo), DELAY));
                return delayed.get();
            });
            f.cutover("forward").cutover(PASS, MATCH);
            List<String> written = new ArrayList<>();
            for (int i = 0; i < 20; i++) written.add(write(f, guard));

            CutoverOutcome back = f.cutover("back").rollback(f.proof());

            assertThat(f.parts.routes().get(f.table).orElseThrow().status()).isEqualTo(RouteStatus.SOURCE);
            for (String id : written) {
                assertThat(kind(f, id))
                        .as("%s, acknowledged by DynamoDB, is in Postgres when the rollback reopens it", id)
                        .isEqualTo("guarded");
            }
            assertThat(delayed.get().heldBack())
                    .as("reads that met a record not due yet")
                    .isPositive();
            assertThat(back.detail())
                    .contains("20 keys written to DynamoDB since the flip equal in Postgres")
                    .containsPattern("after \\d+ reverse-stream rounds \\(20 differed after the first\\)");
        }
    }
}
