package io.rebalance.cutover;

import static io.rebalance.cutover.CutoverStep.ACQUIRE;
import static io.rebalance.cutover.CutoverStep.AWAIT_TAIL;
import static io.rebalance.cutover.CutoverStep.CLOSE_SOURCE;
import static io.rebalance.cutover.CutoverStep.FLIP;
import static io.rebalance.cutover.CutoverStep.NOTE_POSITION;
import static io.rebalance.cutover.CutoverStep.OPEN_TARGET;
import static io.rebalance.cutover.CutoverStep.PRECHECK;
import static io.rebalance.cutover.CutoverStep.PRE_VERIFY;
import static io.rebalance.cutover.CutoverStep.RELEASE;
import static io.rebalance.cutover.CutoverStep.VERIFY;

import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.fence.FenceWriter;
import io.rebalance.protocol.handoff.Lsn;
import io.rebalance.protocol.route.Route;
import io.rebalance.protocol.route.RouteStatus;
import java.util.List;

/**
 * {@code rebalance cutover}: reads and writes move from Postgres to DynamoDB, in the order of {@link #steps} (ADR 7).
 * Pre-checks that fail refuse with nothing changed; a step that fails before the flip puts everything back
 * ({@link FailedStep}); after the flip nothing is undone.
 */
final class ForwardCutover {
    /** The steps, in the order they run: what {@code --dry-run} prints, and the order {@link #steps} keeps. */
    static final List<CutoverStep> STEPS = List.of(
            PRECHECK, PRE_VERIFY, ACQUIRE, CLOSE_SOURCE, NOTE_POSITION, AWAIT_TAIL, VERIFY, OPEN_TARGET, FLIP, RELEASE);

    private final Cutover c;
    private final PreChecks checks;
    private final WindowVerification verification;
    private long token;
    private long marker;
    private WindowVerification.Result before;
    private WindowVerification.Result inWindow;
    private String done = "";
    private boolean changing;
    private boolean flipped;
    private Route route;

    ForwardCutover(Cutover c, PreChecks checks, WindowVerification verification) {
        this.c = c;
        this.checks = checks;
        this.verification = verification;
    }

    List<Step> steps() {
        return Step.inOrder(
                STEPS,
                Step.of(PRECHECK, this::precheck),
                Step.of(PRE_VERIFY, run -> {
                    before = verification.before();
                    if (!before.match()) {
                        throw new StepFailed(
                                "the verification before the window found differences: " + before.detail());
                    }
                    c.journal.note(run.op, "verified before the window: " + before.detail());
                }),
                Step.of(ACQUIRE, run -> {
                    run.acquire(false);
                    token = run.lease().token();
                }),
                Step.of(
                        CLOSE_SOURCE,
                        () -> "token " + token,
                        run -> run.postgresFenceAt(c.stores
                                .setPostgres(FenceWriter.REVERSE, token, run.remaining())
                                .epoch())),
                Step.of(NOTE_POSITION, run -> {
                    marker = c.stores.notePosition();
                    c.journal.set("marker_lsn", Lsn.text(marker));
                }),
                Step.of(AWAIT_TAIL, () -> "M=" + Lsn.text(marker), run -> c.stores.holdTail(marker, run.remaining())),
                Step.of(VERIFY, run -> {
                    inWindow = verification.verify(run.remaining());
                    if (!inWindow.match()) {
                        throw new StepFailed("the in-window verification found differences: " + inWindow.detail());
                    }
                    c.journal.note(run.op, "verified in the window: " + inWindow.detail());
                    run.remaining();
                }),
                Step.of(OPEN_TARGET, () -> "token " + token, run -> {
                    c.openTarget(run, route, token);
                    run.remaining();
                    done = "reads and writes go to DynamoDB; the rollback window is open. Verified before the window: "
                            + before.detail() + "; in it: " + inWindow.detail();
                }),
                Step.of(FLIP, run -> {
                    c.setRoute(run, route, RouteStatus.TARGET);
                    flipped = true; // the point of no return: from here on, nothing is undone
                }),
                Step.of(RELEASE, Step.BY_DONE));
    }

    private void precheck(CommandRun run) throws Exception {
        List<PreCheck> failed = c.failedChecks(checks);
        if (!failed.isEmpty()) {
            String why = "pre-checks failed: "
                    + String.join("; ", failed.stream().map(PreCheck::toString).toList());
            c.journal.end(run.op, "refused", why, 0);
            throw new RebalanceException(ErrorCode.CUTOVER_REFUSED, why + ". Nothing was changed.");
        }
        changing = true; // from here on, a failure puts back what was done
        c.knowKeyAttributes(); // a DynamoDB call fewer inside the window, at FLIP; a failure aborts like any step's
    }

    /**
     * @throws RebalanceException CUTOVER_REFUSED (pre-checks, route not SOURCE, another command running) or
     *     CUTOVER_ABORTED (a step failed before the flip; everything was put back)
     */
    CutoverOutcome run() throws Exception {
        route = c.startFrom(RouteStatus.SOURCE, "cutover");
        try (CommandRun run = c.run("cutover")) {
            c.journal.begin(run.op, c.owner);
            try {
                run.perform(steps());
                return run.done(done);
            } catch (Exception e) {
                if (!changing || flipped) throw e; // refused before anything changed, or past the point of no return
                return c.failure.settle(run, RouteStatus.SOURCE, RouteStatus.TARGET, e, done);
            } finally {
                if (changing) Cutover.quietly(verification);
            }
        }
    }
}
