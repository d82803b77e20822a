package io.rebalance.cutover;

import io.rebalance.core.redis.ReplicaWait;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.handoff.BypassedWrites;
import io.rebalance.protocol.handoff.TargetWriteLog;
import io.rebalance.protocol.lock.LockHolders;
import io.rebalance.protocol.lock.SharedExclusiveLock;
import io.rebalance.protocol.route.FencedRoute;
import io.rebalance.protocol.route.Route;
import io.rebalance.protocol.route.RouteStatus;
import io.rebalance.protocol.route.RoutingTable;
import java.sql.SQLException;
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
    /** The steps of a cutover, in the order they run: what {@code --dry-run} prints. */
    public static final List<CutoverStep> CUTOVER_STEPS = ForwardCutover.STEPS;

    /** The steps of a rollback, in the order they run. */
    public static final List<CutoverStep> ROLLBACK_STEPS = Rollback.STEPS;

    final CutoverSettings settings;
    final SharedExclusiveLock lock;
    final RoutingTable routes;
    final CutoverJournal journal;
    final Alignment stores;
    final ReverseStreamView reverse;
    private final ReplicaWait replicas;
    final TargetWriteLog writeLog;
    final BypassedWrites bypassed;
    private final Supplier<String> partitionKey;
    final String owner;
    final FailedStep failure;
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
            BypassedWrites bypassed,
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
        this.bypassed = bypassed;
        this.partitionKey = partitionKey;
        this.owner = owner;
        this.failure = new FailedStep(settings, routes, journal, stores);
    }

    /** Reads the target's key attributes now, before the window, so that FLIP asks DynamoDB nothing for them. */
    void knowKeyAttributes() {
        partitionKey.get();
    }

    /** Starts an empty log of the keys applications write to DynamoDB under the TARGET route of {@code epoch}. */
    void beginWriteLog(long epoch) {
        writeLog.begin(epoch, settings.targetTable(), partitionKey.get());
    }

    /** The log started again by a rollback under {@code token}, incomplete until it settles it (ADR 12). */
    void restartWriteLog(long epoch, long token) {
        writeLog.restart(epoch, settings.targetTable(), partitionKey.get(), token);
    }

    /** One command run, with the hooks set now. */
    CommandRun run(String op) {
        return new CommandRun(op, settings, lock, journal, hooks, owner);
    }

    /** Test hook: called before every step. */
    public Cutover hooks(CutoverHooks hooks) {
        this.hooks = hooks;
        return this;
    }

    /**
     * Moves reads and writes to DynamoDB ({@link ForwardCutover}).
     *
     * @throws RebalanceException CUTOVER_REFUSED (pre-checks, route not SOURCE, another command running) or
     *     CUTOVER_ABORTED (a step failed before the flip; everything was put back)
     */
    public CutoverOutcome cutover(PreChecks checks, WindowVerification verification) throws Exception {
        return new ForwardCutover(this, checks, verification).run();
    }

    /**
     * Moves reads and writes back to Postgres, once {@code proof} shows Postgres holds every key applications wrote to
     * DynamoDB since the flip (ADR 9): compared until each is equal ({@link Rollback}).
     *
     * @throws RebalanceException CUTOVER_REFUSED (window closed, route not TARGET, reverse stream not running, the
     *     log of written keys incomplete and {@code proof} may not compare every key) or CUTOVER_ABORTED
     */
    public CutoverOutcome rollback(DrainProof proof) throws Exception {
        return new Rollback(this, proof).run();
    }

    /**
     * Ends the rollback window: the route becomes FINAL, the reverse stream stops, rollback is refused from then.
     * Refused while a write that bypassed the Postgres fence differs between the stores ({@link BypassedWrites}).
     *
     * @param closing waits for the tail to record such writes, and compares their rows and items
     */
    public CutoverOutcome closeWindow(WindowClosing closing) throws Exception {
        return new CloseWindow(this, closing).run();
    }

    /**
     * Brings the fences and the forward tail in line with the route after a command died mid-way ({@link Recover}).
     * Harmless when nothing is wrong.
     */
    public CutoverOutcome recover() throws Exception {
        return new Recover(this).run();
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

    Route startFrom(RouteStatus expected, String op) throws Exception {
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
    void dropWriteLog() {
        try {
            writeLog.drop();
        } catch (RuntimeException e) {
            log.warn(
                    "dropping the log of keys written under TARGET failed (the next flip replaces it): {}",
                    e.toString());
        }
    }

    List<PreCheck> failedChecks(PreChecks checks) {
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
    void flip(CommandRun run, Route start, RouteStatus to) throws Exception {
        long epoch = nextEpoch(run, start);
        hooks.inside(AlignInstruction.RECORD_ROUTE);
        run.recorded(epoch);
        // back to Postgres, the DynamoDB fence's copy waits until writes resume (recordBackOnDynamo): the Postgres
        // record is the newer and decides, and no guarded write checks the DynamoDB fence under SOURCE
        long token = run.lease().token();
        if (to == RouteStatus.SOURCE) stores.recordOnPostgres(to, epoch, token, run.remaining());
        else stores.record(to, epoch, token, run.remaining());
        setRoute(run, start, to);
    }

    /**
     * A cutover's OPEN_TARGET: the log of written keys begun, the flip to TARGET recorded on the Postgres fence, then
     * the DynamoDB fence opened to {@code token} with the flip recorded in the same write (ADR 8); its FLIP then sets
     * the route in Redis ({@link #setRoute}). One DynamoDB write in the window where there were two.
     */
    void openTarget(CommandRun run, Route start, long token) throws Exception {
        long epoch = nextEpoch(run, start);
        hooks.inside(AlignInstruction.BEGIN_WRITE_LOG);
        beginWriteLog(epoch);
        hooks.inside(AlignInstruction.RECORD_ROUTE);
        run.recorded(epoch);
        // refused when a command took the lease and set the fence since: nothing is recorded for a flip given up
        stores.recordOnPostgres(RouteStatus.TARGET, epoch, token, run.remaining());
        hooks.inside(AlignInstruction.OPEN_DYNAMO);
        run.dynamoFenceAt(
                stores.openDynamoAndRecord(token, RouteStatus.TARGET, epoch).epoch());
    }

    /**
     * One past every epoch Redis or a fence has seen. The fences' are those this command's own fence writes found
     * under its lease, where it made them; the DynamoDB fence's never passes the Postgres fence's, since every record
     * is written on Postgres first, so the Postgres fence's alone will do.
     */
    private long nextEpoch(CommandRun run, Route start) throws SQLException {
        long redisEpoch = start.epoch(); // read when the command started: only the exclusive lease's holder changes it
        long fenceEpoch = run.fencesSeen() >= 0
                ? run.fencesSeen() // seen by this command's fence writes, under its lease
                : stores.fenced().map(FencedRoute::epoch).orElse(0L);
        return Math.max(redisEpoch, fenceEpoch) + 1;
    }

    /** The flip's last instruction: the route recorded on the fences becomes Redis' (the point of no return). */
    void setRoute(CommandRun run, Route start, RouteStatus to) throws Exception {
        RouteStatus from = start.status();
        long epoch = run.recordedEpoch();
        hooks.inside(AlignInstruction.SET_ROUTE);
        RoutingTable.SetResult r = routes.set(run.lease().lease(), from, to, epoch);
        if (r instanceof RoutingTable.LeaseGone g) {
            throw new StepFailed("the exclusive lease lapsed before the flip (now held by '" + g.holder() + "')");
        }
        if (r instanceof RoutingTable.StatusChanged c) {
            throw new StepFailed("the route is '" + c.actual() + "', not " + from + " as expected");
        }
        awaitReplica(run);
    }

    /**
     * After a flip back, once writes resumed: the DynamoDB fence's copy of the route, one DynamoDB write taken out of
     * the window (ADR 8). Best effort: until it lands the Postgres fence's newer record is the route.
     */
    void recordBackOnDynamo(CommandRun run) throws Exception {
        hooks.inside(AlignInstruction.RECORD_ON_DYNAMO);
        try {
            stores.recordOnDynamo(RouteStatus.SOURCE, run.recordedEpoch());
        } catch (RuntimeException e) {
            log.warn(
                    "recording the route back on the DynamoDB fence failed; the Postgres fence's newer record"
                            + " (epoch {}) is the route: {}",
                    run.recordedEpoch(),
                    e.toString());
        }
    }

    /** After a route change: a failover to a replica that lacks it would undo it in Redis (the fences keep it). */
    void awaitReplica(CommandRun run) {
        try {
            if (replicas.after(lock.keys().route())) return;
            String why = "; no Redis replica confirmed the new route within " + ReplicaWait.TIMEOUT.toSeconds()
                    + " s (the fences keep it: a failover before it arrives is undone by --recover)";
            run.unreplicated(why);
            log.warn("{}{}", run.op, why);
        } catch (RuntimeException e) {
            String why = "; waiting for a Redis replica failed (" + e + "); the fences keep the route";
            run.unreplicated(why);
            log.warn("{}{}", run.op, why);
        }
    }

    /** Undoes what the verification arranged; a failure there changes nothing about the outcome, so it is logged. */
    static void quietly(WindowVerification verification) {
        try {
            verification.close();
        } catch (Exception e) {
            log.warn("ending the verification's arrangements failed (they expire on their own): {}", e.toString());
        }
    }

    RebalanceException notPrepared() {
        return new RebalanceException(
                ErrorCode.CUTOVER_REFUSED,
                "scope '" + settings.scope() + "' has no route: run `rebalance cutover --prepare` first");
    }
}
