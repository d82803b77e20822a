package io.rebalance.cutover;

import static io.rebalance.cutover.CutoverStep.ACQUIRE;
import static io.rebalance.cutover.CutoverStep.CLOSE_WINDOW;
import static io.rebalance.cutover.CutoverStep.RELEASE;

import io.rebalance.protocol.route.Route;
import io.rebalance.protocol.route.RouteStatus;
import java.util.List;

/** {@code rebalance cutover --close-window}: the route becomes FINAL, the reverse stream stops, rollback is refused. */
final class CloseWindow {
    static final String WINDOW_CLOSED = "DynamoDB is the store of record; rollback is no longer possible";

    private final Cutover c;
    private Route route;

    CloseWindow(Cutover c) {
        this.c = c;
    }

    List<Step> steps() {
        return List.of(
                Step.of(ACQUIRE, run -> run.acquire(false)),
                Step.of(CLOSE_WINDOW, run -> c.flip(run, route, RouteStatus.FINAL)),
                Step.of(RELEASE, Step.BY_DONE));
    }

    CutoverOutcome run() throws Exception {
        route = c.startFrom(RouteStatus.TARGET, "close-window");
        try (CommandRun run = c.run("close-window")) {
            c.journal.begin(run.op, c.owner);
            try {
                run.perform(steps());
                c.dropWriteLog();
                return run.done(WINDOW_CLOSED);
            } catch (Exception e) {
                return c.failure.settle(run, RouteStatus.TARGET, RouteStatus.FINAL, e, WINDOW_CLOSED);
            }
        }
    }
}
