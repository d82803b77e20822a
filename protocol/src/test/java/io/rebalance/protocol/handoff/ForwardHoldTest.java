package io.rebalance.protocol.handoff;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.protocol.fence.FenceState;
import io.rebalance.protocol.fence.FenceWriter;
import io.rebalance.protocol.route.RouteStatus;
import org.junit.jupiter.api.Test;

/**
 * The hold the forward tail obeys. After the flip is recorded on the Postgres fence, the tail applies nothing, whatever
 * Redis holds or forgot. Before, a tail started after Redis lost the hold derived a REQUESTED hold at the fence's
 * closing position and applied the changes it replayed up to there, and a fresh request from `cutover --recover` let
 * through everything up to its new position, each as a Postgres row written over DynamoDB, the store of record.
 */
class ForwardHoldTest {
    private static final long CLOSED = 1_000;
    private static final FenceState FLIPPED = new FenceState(FenceWriter.REVERSE, 7, RouteStatus.TARGET, 2, CLOSED);
    private static final FenceState CLOSING = new FenceState(FenceWriter.REVERSE, 7, RouteStatus.SOURCE, 1, CLOSED);
    private static final FenceState OPEN = new FenceState(FenceWriter.APP, 0, RouteStatus.SOURCE, 1, 0);

    @Test
    void aTailStartedAfterRedisLostTheHoldAppliesNothingOnceTheFlipIsRecorded() {
        ForwardHold.State s = ForwardHold.effective(ForwardHold.State.NONE, FLIPPED, 0); // a new tail: nothing applied
        assertThat(s.phase()).isEqualTo(ForwardHold.Phase.HELD);
        assertThat(s.applies(CLOSED - 1)).as("a change replayed from the slot").isFalse();
        assertThat(s.fromFence()).isTrue();
    }

    @Test
    void aFreshRequestAfterTheFlipLetsNothingThroughAndIsAnsweredAtOnce() {
        ForwardHold.Request fresh = new ForwardHold.Request("recover", CLOSED + 500);
        ForwardHold.State s =
                ForwardHold.effective(new ForwardHold.State(ForwardHold.Phase.REQUESTED, fresh), FLIPPED, CLOSED);
        assertThat(s.phase()).isEqualTo(ForwardHold.Phase.HELD);
        assertThat(s.applies(CLOSED + 1))
                .as("a reverse-stream write between closing and the request")
                .isFalse();
        assertThat(s.unanswered()).isTrue();
        assertThat(s.request()).isEqualTo(fresh);
    }

    @Test
    void inACutoversWindowBeforeTheFlipTheTailStillAppliesUpToTheFence() {
        ForwardHold.State s = ForwardHold.effective(ForwardHold.State.NONE, CLOSING, CLOSED - 10);
        assertThat(s.phase()).isEqualTo(ForwardHold.Phase.REQUESTED);
        assertThat(s.applies(CLOSED)).isTrue();
        assertThat(s.applies(CLOSED + 1)).isFalse();
        assertThat(ForwardHold.effective(
                                new ForwardHold.State(
                                        ForwardHold.Phase.REQUESTED, new ForwardHold.Request("cutover", CLOSED)),
                                OPEN,
                                0)
                        .phase())
                .as("an open fence: a request a dead command left cannot make the tail skip applications' changes")
                .isEqualTo(ForwardHold.Phase.NONE);
    }
}
