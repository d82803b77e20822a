package io.rebalance.cutover;

import io.rebalance.protocol.lock.SharedExclusiveLock;
import java.time.Duration;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.MDC;

/** One cutover command's run: which steps ran, for undo and for the figures, and its write-block budget. */
final class CommandRun implements AutoCloseable {
    final String op;
    final Map<CutoverStep, Long> stepMs = new LinkedHashMap<>();
    final Set<CutoverStep> begun = EnumSet.noneOf(CutoverStep.class);
    private HeldLease lease;
    private long blockStartNanos;
    private long stepStart;
    private CutoverStep current;
    /** The epoch this command's flip recorded on the fences (0 before it did). */
    private long recordedEpoch;
    /**
     * The fences' epochs as this command's own fence writes found them under its exclusive lease (-1 until one did):
     * only a holder of that lease records an epoch, so they stay current until this command's flip, which then needs
     * to ask neither store again inside the window.
     */
    private long postgresEpoch = -1;

    private long dynamoEpoch = -1;
    /** What the outcome adds: a route change no replica confirmed. */
    private String unreplicated = "";

    private final CutoverSettings settings;
    private final SharedExclusiveLock lock;
    private final CutoverJournal journal;
    private final String owner;
    final CutoverHooks hooks;

    CommandRun(
            String op,
            CutoverSettings settings,
            SharedExclusiveLock lock,
            CutoverJournal journal,
            CutoverHooks hooks,
            String owner) {
        this.op = op;
        this.settings = settings;
        this.lock = lock;
        this.journal = journal;
        this.hooks = hooks;
        this.owner = owner;
    }

    void step(CutoverStep step, String detail) throws Exception {
        finishStep();
        MDC.put("phase", op); // every line logged while the step runs names the command and the step
        MDC.put("step", step.name());
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

    /**
     * Runs {@code steps} in order, each logged and persisted before it runs, up to {@code RELEASE}, which
     * {@link #done} logs once the outcome is known.
     */
    void perform(List<Step> steps) throws Exception {
        for (Step s : steps) {
            if (s.name() == CutoverStep.RELEASE) return;
            step(s.name(), s.detail().get());
            s.body().run(this);
        }
    }

    /** The {@code ACQUIRE} step's work: the exclusive lease, from which the write-block budget counts. */
    void acquire(boolean waitForOthers) throws Exception {
        blockStartNanos = System.nanoTime();
        long deadline = waitForOthers
                ? blockStartNanos + settings.leaseTtl().multipliedBy(3).toNanos()
                : blockStartNanos + settings.maxWriteBlock().toNanos();
        lease = HeldLease.acquire(lock, owner, settings.leaseTtl(), deadline, waitForOthers);
        journal.set("token", Long.toString(lease.token()));
    }

    /** The step running, or null between steps. */
    CutoverStep current() {
        return current;
    }

    /** The exclusive lease {@link #acquire} took; null before. */
    HeldLease lease() {
        return lease;
    }

    /** The write-block budget counts from the next {@link #acquire} (a log restarted before the window gave back). */
    void budgetFromNextAcquire() {
        blockStartNanos = 0;
    }

    /** The Postgres fence's epoch as this command's own write to it found it. */
    void postgresFenceAt(long epoch) {
        postgresEpoch = epoch;
    }

    /** The DynamoDB fence's epoch as this command's own write to it found it. */
    void dynamoFenceAt(long epoch) {
        dynamoEpoch = epoch;
    }

    /** The fences' newest epoch as this command's own writes found them, or -1 when it wrote neither. */
    long fencesSeen() {
        return postgresEpoch >= 0 ? Math.max(postgresEpoch, dynamoEpoch) : -1;
    }

    /** This command's flip recorded {@code epoch} on the fences. */
    void recorded(long epoch) {
        recordedEpoch = epoch;
    }

    long recordedEpoch() {
        return recordedEpoch;
    }

    /** A route change no replica confirmed, in the outcome's words. */
    void unreplicated(String why) {
        unreplicated = why;
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
        MDC.remove("step");
        MDC.remove("phase");
        if (lease != null) lease.close(); // stops renewing; a lease not released lapses on its own
    }
}
