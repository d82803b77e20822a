package io.rebalance.cutover;

import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.route.Route;
import io.rebalance.protocol.route.RouteStatus;
import io.rebalance.protocol.route.RoutingTable;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a cutover command does when a step fails before its point of no return: it reads the route again (a flip
 * whose reply was lost did happen, and the command is done), or aligns the stores to the route as it is and aborts,
 * or, when Redis cannot say, leaves the stores as they are and says to recover.
 */
final class FailedStep {
    private static final Logger log = LoggerFactory.getLogger(FailedStep.class);

    private final CutoverSettings settings;
    private final RoutingTable routes;
    private final CutoverJournal journal;
    private final Alignment stores;

    FailedStep(CutoverSettings settings, RoutingTable routes, CutoverJournal journal, Alignment stores) {
        this.settings = settings;
        this.routes = routes;
        this.journal = journal;
        this.stores = stores;
    }

    /**
     * A step failed before the point of no return, as far as this command knows: the route is read again, since a
     * flip whose reply was lost did happen. When it says {@code to}, the command is done (the stores are aligned to
     * it, which they are already); otherwise the stores are aligned to the route as it is and the command aborts.
     */
    CutoverOutcome settle(CommandRun run, RouteStatus from, RouteStatus to, Exception cause, String done)
            throws Exception {
        Optional<Route> read;
        try {
            read = routes.get(settings.scope());
        } catch (RuntimeException unreadable) {
            throw unknownRoute(run, cause, unreadable.toString());
        }
        if (read.isEmpty()) throw unknownRoute(run, cause, "Redis has no route for the scope: it lost its data");
        RouteStatus now = read.get().status();
        if (now != to) throw abort(run, now, cause);
        log.warn(
                "{}: {} failed ({}), but the route says {}: the flip happened and its reply was lost",
                run.op,
                run.current(),
                cause.toString(),
                to);
        if (run.lease() != null) stores.to(to, run.lease().token(), settings.alignWait(), run.hooks);
        return run.done(done + " (the flip's reply was lost; the route, read again, says " + to + ")");
    }

    /** Redis cannot say where the route stands: leave the stores as they are (each half refuses what it must). */
    private RebalanceException unknownRoute(CommandRun run, Exception cause, String unreadable) {
        String at = run.current() == null ? "start" : run.current().name();
        String reason = cause instanceof StepFailed ? cause.getMessage() : cause.toString();
        try {
            journal.end(run.op, "failed", "at " + at + ": " + reason + "; the route could not be read", 0);
        } catch (RuntimeException journalAway) {
            log.warn("journaling the failure failed too: {}", journalAway.toString());
        }
        return new RebalanceException(
                ErrorCode.CUTOVER_INTERRUPTED,
                run.op + " failed at step " + at + ": " + reason + ", and the route could not be read (" + unreadable
                        + "), so the stores were left as they are: fences refuse what the route does not allow, so"
                        + " nothing is lost. Run `" + settings.recoverCommand()
                        + "` once Redis answers: it rebuilds the"
                        + " route from the fences if Redis lost it",
                cause);
    }

    /** Before the point of no return: align the stores to the route as it is, release, and say so. */
    private RebalanceException abort(CommandRun run, RouteStatus route, Exception cause) {
        String reason = cause instanceof StepFailed ? cause.getMessage() : cause.toString();
        String at = run.current() == null ? "start" : run.current().name();
        try {
            if (run.lease() != null) {
                long token = run.lease().token();
                // the flip's record named the route abandoned: a newer record names the one the stores are put back
                // to, on Postgres before anything else, so the fences give it back even if putting back fails next
                long undone = run.recordedEpoch() + 1;
                if (run.recordedEpoch() > 0) stores.recordOnPostgres(route, undone, token, settings.alignWait());
                stores.to(route, token, settings.alignWait(), run.hooks);
                if (run.recordedEpoch() > 0) stores.recordOnDynamo(route, undone);
                run.lease().release();
            }
            long blocked = run.blockedMs();
            journal.end(run.op, "aborted", "at " + at + ": " + reason, blocked);
            return new RebalanceException(
                    ErrorCode.CUTOVER_ABORTED,
                    run.op + " aborted at step " + at + ": " + reason + ". Routing is unchanged (" + route
                            + ") and the fences follow it; writes were blocked for " + blocked + " ms and have"
                            + " resumed. Fix the cause and run it again.",
                    cause);
        } catch (Exception undo) {
            journal.end(run.op, "failed", "at " + at + ": " + reason + "; putting back failed: " + undo, 0);
            return new RebalanceException(
                    ErrorCode.CUTOVER_INTERRUPTED,
                    run.op + " aborted at step " + at + ": " + reason + ", and putting the fences back failed ("
                            + undo + "). Routing is unchanged (" + route + "); run `" + settings.recoverCommand() + "`"
                            + " once the cause is fixed",
                    cause);
        }
    }
}
