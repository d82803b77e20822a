package io.rebalance.cutover;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rebalance.client.WriteGuard;
import io.rebalance.protocol.handoff.Lsn;
import io.rebalance.protocol.route.RouteStatus;
import io.rebalance.testkit.SharedServices;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The forward cutover's AWAIT_TAIL when the tail is quicker than the request: the tail applied the batch carrying the
 * marker M, having read the hold before the request for M existed, so that batch could not answer it; with the
 * applications closed out no change follows to make another batch, and the tail answered only at the stream's next
 * heartbeat, seconds later, past the write-block budget (the cutover aborted). A logical message after the request
 * gives the tail a batch to answer with.
 */
class AwaitTailIT {
    @Test
    void aTailThatAppliedTheMarkerBeforeTheRequestLandedStillAnswersInTime() throws Exception {
        try (CutoverFixture f = new CutoverFixture(SharedServices.get().redisUrl, Duration.ofSeconds(3))
                        .set("tail.heartbeat", "60s"); // no heartbeat within the budget: only a change makes a batch
                WriteGuard guard = f.guard()) {
            f.startTail();
            CutoverIT.write(f, guard);
            Cutover cutover = f.cutover("quick tail").hooks(step -> {
                if (step != CutoverStep.AWAIT_TAIL) return;
                long marker = Lsn.parse(f.parts.journal().field("marker_lsn"));
                // the batch carrying M is applied before the request is written
                await().atMost(Duration.ofSeconds(2)).until(() -> f.tail.stats().appliedLsn() >= marker);
            });
            CutoverOutcome out = cutover.cutover(CutoverIT.PASS, CutoverIT.MATCH);
            assertThat(CutoverIT.route(f).status())
                    .as("cut over within the 3 s budget: %s", out.detail())
                    .isEqualTo(RouteStatus.TARGET);
            assertThat(out.stepMs().get(CutoverStep.AWAIT_TAIL)).isLessThan(2_000L);
        }
    }
}
