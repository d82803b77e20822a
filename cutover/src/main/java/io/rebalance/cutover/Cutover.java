package io.rebalance.cutover;

import io.rebalance.core.redis.ReplicaWait;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.fence.FenceWriter;
import io.rebalance.protocol.handoff.Lsn;
import io.rebalance.protocol.handoff.TargetWriteLog;
import io.rebalance.protocol.lock.LockHolders;
import io.rebalance.protocol.lock.SharedExclusiveLock;
import io.rebalance.protocol.route.FencedRoute;
import io.rebalance.protocol.route.Route;
import io.rebalance.protocol.route.RouteStatus;
import io.rebalance.protocol.route.RoutingTable;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code rebalance cutover}: the state machine that moves one scope's reads and writes from Postgres to DynamoDB
 * ({@link #cutover}), back ({@link #rollback}), ends the rollback window ({@link #closeWindow}) and repairs what a
 * command that died left behind ({@link #recover}). ADR 7 gives the argument; this class keeps its order.
 *
 * <p>Every step is logged and persisted ({@link CutoverJournal}) before it runs. Until the route is set, any failure
 * aligns the stores to the route as it still is ({@link Alignment}) and releases: routing stays entirely old. The
 * route changes in one script, only under this command's exclusive lease, so it is never half-switched. A command
 * that dies leaves its lease to lapse (writers resume within its TTL, refused by the fences until recovery if it died
 * between closing and reopening them) and {@code status=running} in the journal; the next command recovers first.
 */
public final class Cutover {
    private static final Logger log = LoggerFactory.getLogger(Cutover.class);
    private static final String ROLLED_BACK = "reads and writes go to Postgres again";
    private static final String WINDOW_CLOSED = "DynamoDB is the store of record; rollback is no longer possible";
    private final CutoverSettings settings;
    private final SharedExclusiveLock lock;
    private final RoutingTable routes;
    private final CutoverJournal journal;
    private final Alignment stores;
    private final ReverseStreamView reverse;
    private final ReplicaWait replicas;
    private final TargetWriteLog writeLog;
    private final Supplier<String> partitionKey;
    private final String owner;
    private final FailedStep failure;
    private CutoverHooks hooks = CutoverHooks.NONE;

    public Cutover(
            CutoverSettings settings,
            SharedExclusiveLock lock,
            RoutingTable routes,
            CutoverJournal journal,
            Alignment stores,
            ReverseStreamView reverse,
            ReplicaWait replicas,
            TargetWriteLog writeLog,
            Supplier<String> partitionKey,
            String owner) {
        this.settings = settings;
        this.lock = lock;
        this.routes = routes;
        this.journal = journal;
        this.stores = stores;
        this.reverse = reverse;
        this.replicas = replicas;
        this.writeLog = writeLog;
        this.partitionKey = partitionKey;
        this.owner = owner;
        this.failure = new FailedStep(settings, routes, journal, stores);
    }

    /** One command run, with the hooks set now. */
    private CommandRun run(String op) {
        return new CommandRun(op, settings, lock, journal, hooks, owner);
    }

    /** Test hook: called before every step. */
    public Cutover hooks(CutoverHooks hooks) {
        this.hooks = hooks;
        return this;
    }

    /**
     * Moves reads and writes to DynamoDB.
     *
     * @throws RebalanceException CUTOVER_REFUSED (pre-checks, route not SOURCE, another command running) or
     *     CUTOVER_ABORTED (a step failed before the flip; everything was put back)
     */
    public CutoverOutcome cutover(PreChecks checks, WindowVerification verification) throws Exception {
        Route route = startFrom(RouteStatus.SOURCE, "cutover");
        try (CommandRun run = run("cutover")) {
            journal.begin(run.op, owner);
            run.step(CutoverStep.PRECHECK, "");
            List<PreCheck> failed = failedChecks(checks);
            if (!failed.isEmpty()) {
                String why = "pre-checks failed: "
                        + String.join(
                                "; ", failed.stream().map(PreCheck::toString).toList());
                journal.end(run.op, "refused", why, 0);
                throw new RebalanceException(ErrorCode.CUTOVER_REFUSED, why + ". Nothing was changed.");
            }
            boolean flipped = false;
            String done = "";
            try {
                run.step(CutoverStep.PRE_VERIFY, "");
                WindowVerification.Result pre = verification.before();
                if (!pre.match())
                    throw new StepFailed("the verification before the window found differences: " + pre.detail());
                journal.note(run.op, "verified before the window: " + pre.detail());
                run.acquire(false);
                long token = run.lease.token();
                run.step(CutoverStep.CLOSE_SOURCE, "token " + token);
                stores.setPostgres(FenceWriter.REVERSE, token, run.remaining());
                run.step(CutoverStep.NOTE_POSITION, "");
                long m = stores.notePosition();
                journal.set("marker_lsn", Lsn.text(m));
                run.step(CutoverStep.AWAIT_TAIL, "M=" + Lsn.text(m));
                stores.holdTail(m, run.remaining());
                run.step(CutoverStep.VERIFY, "");
                WindowVerification.Result v = verification.verify(run.remaining());
                if (!v.match()) throw new StepFailed("the in-window verification found differences: " + v.detail());
                journal.note(run.op, "verified in the window: " + v.detail());
                run.remaining();
                run.step(CutoverStep.OPEN_TARGET, "token " + token);
                stores.setDynamo(FenceWriter.APP, token);
                run.remaining();
                done = "reads and writes go to DynamoDB; the rollback window is open. Verified before the window: "
                        + pre.detail() + "; in it: " + v.detail();
                run.step(CutoverStep.FLIP, "");
                flip(run, route, RouteStatus.TARGET);
                flipped = true; // the point of no return: from here on, nothing is undone
                return run.done(done);
            } catch (Exception e) {
                if (flipped) throw e;
                return failure.settle(run, RouteStatus.SOURCE, RouteStatus.TARGET, e, done);
            } finally {
                quietly(verification);
            }
        }
    }

    /**
     * Moves reads and writes back to Postgres, once {@code proof} shows Postgres holds every key applications wrote to
     * DynamoDB since the flip (ADR 9): reverse-stream rounds until each compares equal.
     *
     * @throws RebalanceException CUTOVER_REFUSED (window closed, route not TARGET, reverse stream not running, the
     *     log of written keys incomplete and {@code proof} may not compare every key) or CUTOVER_ABORTED
     */
    public CutoverOutcome rollback(DrainProof proof) throws Exception {
        Route route = startFrom(RouteStatus.TARGET, "rollback");
        Optional<String> notReady = reverse.notReady();
        if (notReady.isPresent()) {
            throw new RebalanceException(
                    ErrorCode.CUTOVER_REFUSED,
                    "rollback needs the reverse stream, and " + notReady.get() + ". Nothing was changed.");
        }
        TargetWriteLog.Read logged = writeLog.read(route.epoch());
        if (!logged.complete() && !proof.comparesEveryKey()) {
            throw new RebalanceException(
                    ErrorCode.CUTOVER_REFUSED, RollbackDrain.incompleteLog(logged) + " Nothing was changed.");
        }
        try (CommandRun run = run("rollback")) {
            journal.begin(run.op, owner);
            boolean flipped = false;
            try {
                run.acquire(false);
                long token = run.lease.token();
                run.step(CutoverStep.CLOSE_TARGET, "token " + token);
                stores.setDynamo(FenceWriter.NONE, token);
                run.step(CutoverStep.DRAIN_REVERSE, "");
                String drained = new RollbackDrain(reverse, writeLog).drain(run, proof, route.epoch());
                journal.note(run.op, drained);
                run.step(CutoverStep.OPEN_SOURCE, "token " + token);
                stores.setPostgres(FenceWriter.APP, token, run.remaining());
                run.step(CutoverStep.LIFT_HOLD, "");
                stores.liftHold(); // before the flip: once writers resume on Postgres, the tail must carry them
                run.remaining();
                run.step(CutoverStep.FLIP_BACK, "");
                flip(run, route, RouteStatus.SOURCE);
                flipped = true; // the point of no return
                dropWriteLog();
                return run.done(ROLLED_BACK + "; " + drained);
            } catch (Exception e) {
                if (flipped) throw e;
                return failure.settle(run, RouteStatus.TARGET, RouteStatus.SOURCE, e, ROLLED_BACK);
            }
        }
    }

    /** Ends the rollback window: the route becomes FINAL, the reverse stream stops, rollback is refused from then. */
    public CutoverOutcome closeWindow() throws Exception {
        Route route = startFrom(RouteStatus.TARGET, "close-window");
        try (CommandRun run = run("close-window")) {
            journal.begin(run.op, owner);
            try {
                run.acquire(false);
                run.step(CutoverStep.CLOSE_WINDOW, "");
                flip(run, route, RouteStatus.FINAL);
                dropWriteLog();
                return run.done(WINDOW_CLOSED);
            } catch (Exception e) {
                return failure.settle(run, RouteStatus.TARGET, RouteStatus.FINAL, e, WINDOW_CLOSED);
            }
        }
    }

    /**
     * Brings the fences and the forward tail in line with the route after a command died mid-way, waiting out its
     * lease first. When Redis lost the route, or holds one older than a flip the fences recorded, the route is first
     * rebuilt from the fences and the token counter raised to their high-water mark (ADR 8). Harmless when nothing is
     * wrong.
     */
    public CutoverOutcome recover() throws Exception {
        FencedRoute fenced = stores.fenced().orElseThrow(this::notPrepared);
        lock.seedTokens(fenced.highWater()); // before any lease is granted: no token a fence already refuses
        try (CommandRun run = run("recover")) {
            journal.begin(run.op, owner);
            run.acquire(true);
            fenced = stores.fenced().orElseThrow(this::notPrepared); // again, under the lease
            Optional<Route> before = routes.get(settings.scope());
            run.step(
                    CutoverStep.RECOVER,
                    "route " + before.map(r -> r.status().name()).orElse("missing"));
            if (fenced.conflict()) {
                journal.end(run.op, "failed", "both fences admit applications: " + fenced.detail(), 0);
                throw new RebalanceException(
                        ErrorCode.CUTOVER_INTERRUPTED,
                        "both fences admit applications (" + fenced.detail() + "), which no order of the cutover's"
                                + " steps leaves: something else changed them. Nothing was changed; see"
                                + " docs/cutover.md (\"Recovering by hand\")");
            }
            String found = "";
            if (fenced.supersedes(before)) {
                if (!routes.restore(run.lease.lease(), fenced.status(), fenced.epoch())) {
                    throw new StepFailed("the exclusive lease lapsed before the route could be rebuilt");
                }
                if (before.isPresent()
                        && before.get().status() == RouteStatus.TARGET
                        && fenced.status() == RouteStatus.TARGET) {
                    // Redis kept its data: the log of the old epoch goes on (whether it is complete, read tells)
                    writeLog.renumber(before.get().epoch(), fenced.epoch());
                }
                awaitReplica(run);
                found = before.isEmpty()
                        ? "; Redis had no route (it lost its data), so it was rebuilt from the fences: "
                                + fenced.status() + ", epoch " + fenced.epoch()
                        : "; Redis' route (" + before.get().status() + ", epoch "
                                + before.get().epoch()
                                + ") had missed a flip the fences recorded, so it was set to " + fenced.status()
                                + ", epoch " + fenced.epoch();
                log.warn("recover{}", found);
            }
            Route route = routes.get(settings.scope()).orElseThrow(this::notPrepared);
            stores.to(route.status(), run.lease.token(), settings.alignWait(), hooks);
            return run.done("the stores follow the route (" + route.status() + ")" + found);
        }
    }

    /**
     * Whether the last command stopped mid-way: its journal says running and its lease is gone, or it failed to put
     * the stores back after an abort.
     */
    public Optional<CutoverJournal.Entry> interrupted() {
        Optional<CutoverJournal.Entry> last = journal.read();
        if (last.isEmpty()) return Optional.empty();
        if ("failed".equals(last.get().status())) return last;
        if (!last.get().running()) return Optional.empty();
        LockHolders h = lock.holders();
        boolean alive = (h.exclusive() != null
                        && h.exclusive().owner().equals(last.get().owner()))
                || (h.pending() != null && h.pending().owner().equals(last.get().owner()));
        return alive ? Optional.empty() : last;
    }

    private Route startFrom(RouteStatus expected, String op) throws Exception {
        Optional<FencedRoute> fenced = stores.fenced();
        if (fenced.isPresent()) lock.seedTokens(fenced.get().highWater());
        boolean redisBehind = fenced.isPresent() && fenced.get().supersedes(routes.get(settings.scope()));
        if (interrupted().isPresent() || redisBehind) {
            CutoverOutcome recovered = recover();
            log.warn("{}: recovered first: {}", op, recovered.detail());
        }
        Optional<CutoverJournal.Entry> last = journal.read();
        if (last.isPresent() && last.get().running()) {
            throw new RebalanceException(
                    ErrorCode.CUTOVER_REFUSED,
                    "a " + last.get().op() + " by " + last.get().owner() + " is running (step "
                            + last.get().step() + "); wait for it, or see `rebalance status`");
        }
        Route route = routes.get(settings.scope()).orElseThrow(this::notPrepared);
        if (route.status() != expected) {
            throw new RebalanceException(ErrorCode.CUTOVER_REFUSED, refusal(op, route.status()));
        }
        return route;
    }

    private String refusal(String op, RouteStatus actual) {
        String scope = "scope '" + settings.scope() + "'";
        return switch (op) {
            case "cutover" ->
                scope + " is " + actual + " already: reads and writes go to DynamoDB"
                        + (actual == RouteStatus.TARGET ? "; to go back, run `rebalance cutover --rollback`" : "");
            default ->
                actual == RouteStatus.FINAL
                        ? "the rollback window of " + scope
                                + " is closed (the route is FINAL): DynamoDB is the store of"
                                + " record and Postgres is no longer kept current, so " + op + " is refused"
                        : scope + " is SOURCE: reads and writes go to Postgres, so there is nothing to " + op
                                + "; run `rebalance cutover` first";
        };
    }

    /** The route left TARGET: the log has no use any more; one left behind is replaced by the next flip's. */
    private void dropWriteLog() {
        try {
            writeLog.drop();
        } catch (RuntimeException e) {
            log.warn(
                    "dropping the log of keys written under TARGET failed (the next flip replaces it): {}",
                    e.toString());
        }
    }

    private List<PreCheck> failedChecks(PreChecks checks) {
        try {
            return checks.run().stream().filter(c -> !c.passed()).toList();
        } catch (Exception e) { // a check that cannot be made is a failed check, and the journal still ends
            return List.of(PreCheck.fail("pre-checks", "could not be run: " + e));
        }
    }

    /**
     * Records the new route on the fences, then sets it in Redis, under one epoch past every epoch either has seen: a
     * route applications may be using is always one the fences can give back (ADR 8).
     */
    private void flip(CommandRun run, Route start, RouteStatus to) throws Exception {
        RouteStatus from = start.status();
        long redisEpoch = start.epoch(); // read when the command started: only the exclusive lease's holder changes it
        long fenceEpoch = stores.fenced().map(FencedRoute::epoch).orElse(0L);
        long epoch = Math.max(redisEpoch, fenceEpoch) + 1;
        if (to == RouteStatus.TARGET) {
            hooks.inside(AlignInstruction.BEGIN_WRITE_LOG);
            writeLog.begin(epoch, settings.targetTable(), partitionKey.get());
        }
        hooks.inside(AlignInstruction.RECORD_ROUTE);
        run.recordedEpoch = epoch;
        stores.record(to, epoch, run.remaining());
        hooks.inside(AlignInstruction.SET_ROUTE);
        RoutingTable.SetResult r = routes.set(run.lease.lease(), from, to, epoch);
        if (r instanceof RoutingTable.LeaseGone g) {
            throw new StepFailed("the exclusive lease lapsed before the flip (now held by '" + g.holder() + "')");
        }
        if (r instanceof RoutingTable.StatusChanged c) {
            throw new StepFailed("the route is '" + c.actual() + "', not " + from + " as expected");
        }
        awaitReplica(run);
    }

    /** After a route change: a failover to a replica that lacks it would undo it in Redis (the fences keep it). */
    private void awaitReplica(CommandRun run) {
        try {
            if (replicas.after(lock.keys().route())) return;
            run.unreplicated = "; no Redis replica confirmed the new route within " + ReplicaWait.TIMEOUT.toSeconds()
                    + " s (the fences keep it: a failover before it arrives is undone by --recover)";
        } catch (RuntimeException e) {
            run.unreplicated = "; waiting for a Redis replica failed (" + e + "); the fences keep the route";
        }
        log.warn("{}{}", run.op, run.unreplicated);
    }

    /** Undoes what the verification arranged; a failure there changes nothing about the outcome, so it is logged. */
    private static void quietly(WindowVerification verification) {
        try {
            verification.close();
        } catch (Exception e) {
            log.warn("ending the verification's arrangements failed (they expire on their own): {}", e.toString());
        }
    }

    private RebalanceException notPrepared() {
        return new RebalanceException(
                ErrorCode.CUTOVER_REFUSED,
                "scope '" + settings.scope() + "' has no route: run `rebalance cutover --prepare` first");
    }
}
