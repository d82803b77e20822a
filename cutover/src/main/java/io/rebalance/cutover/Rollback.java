package io.rebalance.cutover;

import static io.rebalance.cutover.CutoverStep.ACQUIRE;
import static io.rebalance.cutover.CutoverStep.CLOSE_TARGET;
import static io.rebalance.cutover.CutoverStep.DRAIN_REVERSE;
import static io.rebalance.cutover.CutoverStep.FLIP_BACK;
import static io.rebalance.cutover.CutoverStep.LIFT_HOLD;
import static io.rebalance.cutover.CutoverStep.OPEN_SOURCE;
import static io.rebalance.cutover.CutoverStep.RELEASE;

import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.fence.FenceWriter;
import io.rebalance.protocol.handoff.TargetWriteLog;
import io.rebalance.protocol.route.Route;
import io.rebalance.protocol.route.RouteStatus;
import java.util.List;
import java.util.Optional;

/**
 * {@code rebalance cutover --rollback}: reads and writes move back to Postgres, in the order of {@link #steps}, once
 * the drain shows Postgres holds every key applications wrote to DynamoDB since the flip (ADR 9).
 */
final class Rollback {
    static final String ROLLED_BACK = "reads and writes go to Postgres again";

    /** The steps, in the order they run: what {@code --dry-run} prints for a rollback, and the order {@link #steps} keeps. */
    static final List<CutoverStep> STEPS =
            List.of(ACQUIRE, CLOSE_TARGET, DRAIN_REVERSE, OPEN_SOURCE, LIFT_HOLD, FLIP_BACK, RELEASE);

    private final Cutover c;
    private final DrainProof proof;
    private Route route;
    private long token;
    private String drained = "";
    private boolean flipped;
    /** Whether the log was started again before the window (ADR 12), for the outcome's words. */
    private boolean restartedLog;

    Rollback(Cutover c, DrainProof proof) {
        this.c = c;
        this.proof = proof;
    }

    List<Step> steps() {
        return Step.inOrder(
                STEPS,
                Step.of(ACQUIRE, run -> {
                    run.acquire(false);
                    token = run.lease().token();
                }),
                Step.of(
                        CLOSE_TARGET,
                        () -> "token " + token,
                        run -> run.dynamoFenceAt(
                                c.stores.setDynamo(FenceWriter.NONE, token).epoch())),
                Step.of(DRAIN_REVERSE, run -> {
                    drained = new RollbackDrain(c.reverse, c.writeLog, c.stores)
                            .drain(run, proof, route.epoch(), restartedLog);
                    c.journal.note(run.op, drained);
                }),
                Step.of(
                        OPEN_SOURCE,
                        () -> "token " + token,
                        run -> run.postgresFenceAt(c.stores
                                .setPostgres(FenceWriter.APP, token, run.remaining())
                                .epoch())),
                Step.of(LIFT_HOLD, run -> {
                    c.stores.liftHold(); // before the flip: once writers resume on Postgres, the tail must carry them
                    run.remaining();
                }),
                Step.of(FLIP_BACK, run -> {
                    c.flip(run, route, RouteStatus.SOURCE);
                    flipped = true; // the point of no return
                }),
                Step.of(RELEASE, Step.BY_DONE));
    }

    /**
     * With an incomplete log of written keys (Redis lost it, or it passed its cap) the rollback first starts it again
     * and compares every key while applications write ({@link LogRestart}), unless the proof compares every key in
     * the window itself ({@code --verify-all}).
     *
     * @throws RebalanceException CUTOVER_REFUSED (window closed, route not TARGET, reverse stream not running) or
     *     CUTOVER_ABORTED
     */
    CutoverOutcome run() throws Exception {
        route = c.startFrom(RouteStatus.TARGET, "rollback");
        Optional<String> notReady = c.reverse.notReady();
        if (notReady.isPresent()) {
            throw new RebalanceException(
                    ErrorCode.CUTOVER_REFUSED,
                    "rollback needs the reverse stream, and " + notReady.get() + ". Nothing was changed.");
        }
        TargetWriteLog.Read logged = c.writeLog.read(route.epoch());
        try (CommandRun run = c.run("rollback")) {
            String restarted = "";
            if (!logged.complete() && !proof.comparesEveryKey()) {
                try {
                    restarted = new LogRestart(c).run(run, route, logged, proof) + "; then ";
                    restartedLog = true;
                } catch (RebalanceException e) {
                    throw e;
                } catch (Exception e) {
                    throw new RebalanceException(
                            ErrorCode.CUTOVER_ABORTED,
                            "the rollback could not start the incomplete log of written keys again: " + e.getMessage()
                                    + ". The route is TARGET, as before; run the rollback again",
                            e);
                }
            }
            c.journal.begin(run.op, c.owner);
            try {
                run.perform(steps());
                c.dropWriteLog();
                CutoverOutcome done = run.done(ROLLED_BACK + "; " + restarted + drained);
                c.recordBackOnDynamo(run);
                return done;
            } catch (Exception e) {
                if (flipped) throw e;
                return c.failure.settle(run, RouteStatus.TARGET, RouteStatus.SOURCE, e, ROLLED_BACK);
            }
        }
    }
}
