package io.rebalance.cutover;

import io.rebalance.protocol.fence.FenceWriter;
import io.rebalance.protocol.handoff.TargetWriteLog;
import io.rebalance.protocol.route.Route;
import java.time.Duration;
import java.util.Collection;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * What a rollback does when the log of keys written to DynamoDB since the flip is incomplete (Redis lost it, restarted
 * or failed over, or it passed its cap), before its own steps (ADR 12): it fences every write permit granted so far
 * and starts the log again, so every DynamoDB write acknowledged from then on is logged; then it compares every key
 * of both stores while applications keep writing, and adds the keys that differ to the log. A key that compares
 * equal then, and is not written again, stays equal (DynamoDB holds it, the reverse stream writes what DynamoDB
 * holds); one written again is in the new log; one that differs is compared again in the window. Until the keys are
 * added the log stays incomplete, so a rollback that dies in between leaves the next one to compare every key again.
 */
final class LogRestart {
    /**
     * How far the token counter jumps first: a Redis that lost data may have lost the counter's last increments, so
     * writers may hold tokens above what it says now; fewer than this many leases between a flip and a loss is
     * assumed (a trillion: thirty years of a thousand leases a second).
     */
    static final long TOKEN_JUMP = 1_000_000_000_000L;
    /** How long the comparison of every key may take: it runs while applications write, so nothing waits on it. */
    static final Duration COMPARE_BOUND = Duration.ofHours(24);

    private final Cutover c;

    LogRestart(Cutover c) {
        this.c = c;
    }

    /**
     * Runs in the rollback's command run before its journal says it runs (the lease is held only for a moment here,
     * so a journal saying "running" would read as a dead command for the whole comparison).
     *
     * @return what was done, for the outcome
     */
    String run(CommandRun run, Route route, TargetWriteLog.Read lost, DrainProof proof) throws Exception {
        long started = System.nanoTime();
        c.lock.seedTokens(c.lock.seedTokens(0) + TOKEN_JUMP);
        run.acquire(false);
        long token = run.lease().token();
        try {
            // every permit granted before this one holds a lower token: DynamoDB refuses its writes from now on
            c.stores.setDynamo(FenceWriter.APP, token);
            c.restartWriteLog(route.epoch(), token);
            // still ours now: no permit at or past this token was granted while the log began
            c.lock.renew(run.lease().lease(), c.settings.leaseTtl());
        } finally {
            run.lease().release();
        }
        long blockedMs = run.blockedMs();
        run.budgetFromNextAcquire(); // the window's budget counts from its own ACQUIRE
        c.journal.note(
                run.op,
                "the log of written keys was incomplete (" + lost.incomplete() + "): started it again"
                        + " under token " + token + " (writes blocked " + blockedMs
                        + " ms); comparing every key of both"
                        + " stores while applications write");
        long compareStart = System.nanoTime();
        Collection<String> differing;
        try {
            differing = proof.differing(Optional.empty(), COMPARE_BOUND);
        } catch (TimeoutException e) {
            throw new StepFailed("comparing every key of both stores did not finish within " + COMPARE_BOUND.toHours()
                    + " h (" + e.getMessage() + ")");
        }
        if (!c.writeLog.settle(token, differing)) {
            throw new StepFailed("another rollback started the log of written keys again while this one compared");
        }
        long compareMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - compareStart);
        String detail = "the log of written keys was incomplete (" + lost.incomplete() + "), so it was started again"
                + " (writes blocked " + blockedMs + " ms) and every key of both stores compared before the window in "
                + compareMs + " ms (" + differing.size() + " differed, compared again in it)";
        c.journal.note(run.op, detail);
        return detail + ", " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started) + " ms in all";
    }
}
