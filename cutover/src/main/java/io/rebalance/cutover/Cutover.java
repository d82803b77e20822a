package io.rebalance.cutover;

import io.rebalance.core.ErrorCode;
import io.rebalance.core.RebalanceException;
import io.rebalance.core.fence.FenceWriter;
import io.rebalance.core.handoff.Lsn;
import io.rebalance.core.handoff.TargetWriteLog;
import io.rebalance.core.lock.LockHolders;
import io.rebalance.core.lock.SharedExclusiveLock;
import io.rebalance.core.redis.ReplicaWait;
import io.rebalance.core.route.FencedRoute;
import io.rebalance.core.route.Route;
import io.rebalance.core.route.RouteStatus;
import io.rebalance.core.route.RoutingTable;
import java.time.Duration;
import java.util.Collection;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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
    }

    /** Test hook: called before every step. */
    public Cutover hooks(CutoverHooks hooks) {
        this.hooks = hooks;
        return this;
    }

    /** One command run: which steps ran, for undo and for the figures. */
    private final class Run implements AutoCloseable {
        final String op;
        final Map<CutoverStep, Long> stepMs = new LinkedHashMap<>();
        final Set<CutoverStep> begun = EnumSet.noneOf(CutoverStep.class);
        HeldLease lease;
        long blockStartNanos;
        long stepStart;
        CutoverStep current;
        /** The epoch this command's flip recorded on the fences (0 before it did). */
        long recordedEpoch;
        /** What the outcome adds: a route change no replica confirmed. */
        String unreplicated = "";

        Run(String op) {
            this.op = op;
        }

        void step(CutoverStep step, String detail) throws Exception {
            finishStep();
            journal.step(op, step, detail);
            begun.add(step);
            current = step;
            stepStart = System.nanoTime();
            hooks.before(step);
        }

        void finishStep() {
            if (current != null) stepMs.put(current, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stepStart));
            current = null;
        }

        void acquire(boolean waitForOthers) throws Exception {
            step(CutoverStep.ACQUIRE, "");
            blockStartNanos = System.nanoTime();
            long deadline = waitForOthers
                    ? blockStartNanos + settings.leaseTtl().multipliedBy(3).toNanos()
                    : blockStartNanos + settings.maxWriteBlock().toNanos();
            lease = HeldLease.acquire(lock, owner, settings.leaseTtl(), deadline, waitForOthers);
            journal.set("token", Long.toString(lease.token()));
        }

        /** What is left of the write-block budget; fails once it is spent. */
        Duration remaining() throws StepFailed {
            long left = blockStartNanos + settings.maxWriteBlock().toNanos() - System.nanoTime();
            if (left <= 0) {
                throw new StepFailed("writes have been blocked for " + blockedMs() + " ms, the most --max-write-block ("
                        + settings.maxWriteBlock().toMillis() + " ms) allows");
            }
            return Duration.ofNanos(left);
        }

        long blockedMs() {
            return blockStartNanos == 0 ? 0 : TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - blockStartNanos);
        }

        CutoverOutcome done(String detail) throws Exception {
            step(CutoverStep.RELEASE, "");
            lease.release();
            long blocked = blockedMs();
            finishStep();
            journal.end(op, "done", detail + unreplicated, blocked);
            return new CutoverOutcome(op, lease.token(), blocked, stepMs, detail + unreplicated);
        }

        @Override
        public void close() {
            if (lease != null) lease.close(); // stops renewing; a lease not released lapses on its own
        }
    }

    /**
     * Moves reads and writes to DynamoDB.
     *
     * @throws RebalanceException CUTOVER_REFUSED (pre-checks, route not SOURCE, another command running) or
     *     CUTOVER_ABORTED (a step failed before the flip; everything was put back)
     */
    public CutoverOutcome cutover(PreChecks checks, WindowVerification verification) throws Exception {
        Route route = startFrom(RouteStatus.SOURCE, "cutover");
        try (Run run = new Run("cutover")) {
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
                return settle(run, RouteStatus.SOURCE, RouteStatus.TARGET, e, done);
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
            throw new RebalanceException(ErrorCode.CUTOVER_REFUSED, incompleteLog(logged) + " Nothing was changed.");
        }
        try (Run run = new Run("rollback")) {
            journal.begin(run.op, owner);
            boolean flipped = false;
            try {
                run.acquire(false);
                long token = run.lease.token();
                run.step(CutoverStep.CLOSE_TARGET, "token " + token);
                stores.setDynamo(FenceWriter.NONE, token);
                run.step(CutoverStep.DRAIN_REVERSE, "");
                String drained = drain(run, proof, route.epoch());
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
                return settle(run, RouteStatus.TARGET, RouteStatus.SOURCE, e, ROLLED_BACK);
            }
        }
    }

    /** Ends the rollback window: the route becomes FINAL, the reverse stream stops, rollback is refused from then. */
    public CutoverOutcome closeWindow() throws Exception {
        Route route = startFrom(RouteStatus.TARGET, "close-window");
        try (Run run = new Run("close-window")) {
            journal.begin(run.op, owner);
            try {
                run.acquire(false);
                run.step(CutoverStep.CLOSE_WINDOW, "");
                flip(run, route, RouteStatus.FINAL);
                dropWriteLog();
                return run.done(WINDOW_CLOSED);
            } catch (Exception e) {
                return settle(run, RouteStatus.TARGET, RouteStatus.FINAL, e, WINDOW_CLOSED);
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
        try (Run run = new Run("recover")) {
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

    /**
     * Reverse-stream rounds until every key applications wrote to DynamoDB since the flip compares equal in Postgres.
     * DynamoDB takes no writes now (its fence is closed), and the reverse stream writes what DynamoDB holds, so a key
     * once equal stays equal, and a key that differs is a stream record not delivered yet: DynamoDB Streams gives no
     * bound on that, so this compares instead of waiting a fixed time. Fails when the write-block budget runs out.
     *
     * @return what was compared, for the outcome
     */
    private String drain(Run run, DrainProof proof, long epoch) throws Exception {
        drainRound(run);
        // read after the fence closed: every write it admitted logged its keys before it was sent
        TargetWriteLog.Read logged = writeLog.read(epoch);
        if (!logged.complete() && !proof.comparesEveryKey()) throw new StepFailed(incompleteLog(logged));
        Optional<Collection<String>> keys = logged.keys().map(k -> k);
        int rounds = 1;
        Collection<String> differ = compare(run, proof, keys);
        long firstDiffering = differ.size();
        while (!differ.isEmpty()) {
            try {
                drainRound(run); // the records of what still differs were not delivered yet
                rounds++;
                differ = compare(run, proof, Optional.of(differ));
            } catch (StepFailed spent) { // the budget ran out: say what kept Postgres closed
                throw stillDiffer(differ, rounds, spent);
            }
        }
        return (keys.isPresent()
                        ? keys.get().size() + " keys written to DynamoDB since the flip"
                        : "every key of both stores (" + logged.incomplete() + ")")
                + " equal in Postgres after " + rounds + " reverse-stream round" + (rounds == 1 ? "" : "s")
                + (firstDiffering > 0 ? " (" + firstDiffering + " differed after the first)" : "");
    }

    private static StepFailed stillDiffer(Collection<String> differ, int rounds, StepFailed spent) {
        return new StepFailed(differ.size() + " of the keys written to DynamoDB since the flip still differ in Postgres"
                + " after " + rounds + " reverse-stream rounds ("
                + String.join(", ", differ.stream().limit(5).toList())
                + (differ.size() > 5 ? ", ..." : "") + "): " + spent.getMessage()
                + "; `rebalance verify --all` names what differs");
    }

    private void drainRound(Run run) throws Exception {
        String id = reverse.drain().request();
        if (!reverse.drain().awaitDrained(id, run.remaining())) {
            throw new StepFailed("the reverse stream did not finish a round within the write-block budget;"
                    + " is `rebalance tail` running? (`rebalance status` shows the reverse stream's lag)");
        }
    }

    private static Collection<String> compare(Run run, DrainProof proof, Optional<Collection<String>> keys)
            throws Exception {
        try {
            return proof.differing(keys, run.remaining());
        } catch (TimeoutException e) {
            throw new StepFailed("comparing the keys written since the flip did not finish within the write-block"
                    + " budget (" + e.getMessage() + ")");
        }
    }

    private static String incompleteLog(TargetWriteLog.Read logged) {
        return "the log of the keys applications wrote to DynamoDB since the flip is incomplete: "
                + logged.incomplete() + ". A rollback must then compare every key of both stores while writes are"
                + " blocked: run `rebalance cutover --rollback --verify-all`, with a --max-write-block long enough to"
                + " read both stores whole.";
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
    private void flip(Run run, Route start, RouteStatus to) throws Exception {
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

    /**
     * A step failed before the point of no return, as far as this command knows: the route is read again, since a
     * flip whose reply was lost did happen. When it says {@code to}, the command is done (the stores are aligned to
     * it, which they are already); otherwise the stores are aligned to the route as it is and the command aborts.
     */
    private CutoverOutcome settle(Run run, RouteStatus from, RouteStatus to, Exception cause, String done)
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
                run.current,
                cause.toString(),
                to);
        if (run.lease != null) stores.to(to, run.lease.token(), settings.alignWait(), hooks);
        return run.done(done + " (the flip's reply was lost; the route, read again, says " + to + ")");
    }

    /** After a route change: a failover to a replica that lacks it would undo it in Redis (the fences keep it). */
    private void awaitReplica(Run run) {
        try {
            if (replicas.after(lock.keys().route())) return;
            run.unreplicated = "; no Redis replica confirmed the new route within " + ReplicaWait.TIMEOUT.toSeconds()
                    + " s (the fences keep it: a failover before it arrives is undone by --recover)";
        } catch (RuntimeException e) {
            run.unreplicated = "; waiting for a Redis replica failed (" + e + "); the fences keep the route";
        }
        log.warn("{}{}", run.op, run.unreplicated);
    }

    /** Redis cannot say where the route stands: leave the stores as they are (each half refuses what it must). */
    private RebalanceException unknownRoute(Run run, Exception cause, String unreadable) {
        String at = run.current == null ? "start" : run.current.name();
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
                        + " nothing is lost. Run `rebalance cutover --recover` once Redis answers: it rebuilds the"
                        + " route from the fences if Redis lost it",
                cause);
    }

    /** Before the point of no return: align the stores to the route as it is, release, and say so. */
    private RebalanceException abort(Run run, RouteStatus route, Exception cause) {
        String reason = cause instanceof StepFailed ? cause.getMessage() : cause.toString();
        String at = run.current == null ? "start" : run.current.name();
        try {
            if (run.lease != null) {
                stores.to(route, run.lease.token(), settings.alignWait(), hooks);
                // the flip's record named the route abandoned: a newer record names the one the stores follow
                if (run.recordedEpoch > 0) stores.record(route, run.recordedEpoch + 1, settings.alignWait());
                run.lease.release();
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
                            + undo + "). Routing is unchanged (" + route + "); run `rebalance cutover --recover`"
                            + " once the cause is fixed",
                    cause);
        }
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
