package io.rebalance.cutover;

import static io.rebalance.cutover.CutoverStep.ACQUIRE;
import static io.rebalance.cutover.CutoverStep.RECOVER;
import static io.rebalance.cutover.CutoverStep.RELEASE;

import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.route.FencedRoute;
import io.rebalance.protocol.route.Route;
import io.rebalance.protocol.route.RouteStatus;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code rebalance cutover --recover}: brings the fences and the forward tail in line with the route after a command
 * died mid-way, waiting out its lease first. When Redis lost the route, or holds one older than a flip the fences
 * recorded, the route is first rebuilt from the fences and the token counter raised to their high-water mark (ADR
 * 8). Harmless when nothing is wrong.
 */
final class Recover {
    private static final Logger log = LoggerFactory.getLogger(Recover.class);

    private final Cutover c;
    private FencedRoute fenced;
    private Optional<Route> before = Optional.empty();
    private String found = "";

    Recover(Cutover c) {
        this.c = c;
    }

    List<Step> steps() {
        return List.of(
                Step.of(ACQUIRE, run -> {
                    run.acquire(true);
                    fenced = c.stores.fenced().orElseThrow(c::notPrepared); // again, under the lease
                    before = c.routes.get(c.settings.scope());
                }),
                Step.of(
                        RECOVER,
                        () -> "route " + before.map(r -> r.status().name()).orElse("missing"),
                        this::align),
                Step.of(RELEASE, Step.BY_DONE));
    }

    private void align(CommandRun run) throws Exception {
        if (fenced.conflict()) {
            c.journal.end(run.op, "failed", "both fences admit applications: " + fenced.detail(), 0);
            throw new RebalanceException(
                    ErrorCode.CUTOVER_INTERRUPTED,
                    "both fences admit applications (" + fenced.detail() + "), which no order of the cutover's steps"
                            + " leaves: something else changed them. Nothing was changed; see docs/cutover.md"
                            + " (\"Recovering by hand\")");
        }
        if (fenced.supersedes(before)) {
            if (!c.routes.restore(run.lease().lease(), fenced.status(), fenced.epoch())) {
                throw new StepFailed("the exclusive lease lapsed before the route could be rebuilt");
            }
            if (before.isPresent()
                    && before.get().status() == RouteStatus.TARGET
                    && fenced.status() == RouteStatus.TARGET) {
                // Redis kept its data: the log of the old epoch goes on (whether it is complete, read tells)
                c.writeLog.renumber(before.get().epoch(), fenced.epoch());
            }
            c.awaitReplica(run);
            found = before.isEmpty()
                    ? "; Redis had no route (it lost its data), so it was rebuilt from the fences: " + fenced.status()
                            + ", epoch " + fenced.epoch()
                    : "; Redis' route (" + before.get().status() + ", epoch "
                            + before.get().epoch()
                            + ") had missed a flip the fences recorded, so it was set to " + fenced.status()
                            + ", epoch " + fenced.epoch();
            log.warn("recover{}", found);
        }
        Route route = c.routes.get(c.settings.scope()).orElseThrow(c::notPrepared);
        c.stores.to(route.status(), run.lease().token(), c.settings.alignWait(), run.hooks);
        found = "the stores follow the route (" + route.status() + ")" + found;
    }

    CutoverOutcome run() throws Exception {
        FencedRoute first = c.stores.fenced().orElseThrow(c::notPrepared);
        c.lock.seedTokens(first.highWater()); // before any lease is granted: no token a fence already refuses
        try (CommandRun run = c.run("recover")) {
            c.journal.begin(run.op, c.owner);
            run.perform(steps());
            return run.done(found);
        }
    }
}
