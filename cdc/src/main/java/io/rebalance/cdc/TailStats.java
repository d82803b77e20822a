package io.rebalance.cdc;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/** What the tail has applied: counted by the handler, published by {@link TailStatus}. */
public final class TailStats {
    final AtomicLong events = new AtomicLong();
    /** Where the batches' time goes, stage by stage. */
    final StageTimes stages = new StageTimes();

    final AtomicLong items = new AtomicLong();
    final AtomicLong reconciled = new AtomicLong();
    /** LSN up to which every change is applied (the last event of the last batch landed), as a number; 0 before. */
    final AtomicLong appliedLsn = new AtomicLong();
    /** LSN of the last TRUNCATE of the source table seen (not applied), 0 if none. */
    final AtomicLong truncatedLsn = new AtomicLong();
    /**
     * Commit time (epoch ms) of the oldest change delivered to the tail and not yet applied, 0 when none waits: the
     * lag is now minus this, so a tail stuck on a batch shows its lag growing instead of its last success.
     */
    final AtomicLong waitingSinceCommitMs = new AtomicLong();
    /** When the last change was applied, epoch ms. */
    final AtomicLong lastAppliedMs = new AtomicLong();

    /** Batches applied again after a failure (the source or DynamoDB away). */
    final AtomicLong applyRetries = new AtomicLong();
    /** Times Debezium stopped on an error and was started again. */
    final AtomicLong restarts = new AtomicLong();
    /** Times this process lost the tail lease while streaming (Redis away past the TTL, or taken over) and stood by. */
    final AtomicLong leaseLapses = new AtomicLong();
    /** Batches delivered before a snapshot saw their commits, so the read waited (CommitVisibility). */
    final AtomicLong commitWaits = new AtomicLong();

    /** WAL the replication slot holds back, bytes, as last read (published as {@code retained_bytes}); 0 before. */
    final AtomicLong retainedWalBytes = new AtomicLong();

    /** This process holds the tail lease and streams (1), or stands by (0). */
    final AtomicBoolean active = new AtomicBoolean();

    /** When the tail's loop last ran (standing by or publishing while it streams), epoch ms. */
    final AtomicLong lastTickMs = new AtomicLong(System.currentTimeMillis());

    /** Change events passed over because a cutover held the tail (ForwardHold). */
    final AtomicLong skippedWhileHeld = new AtomicLong();

    /** Of those, the changes the reverse stream did not make: writes that bypassed the Postgres fence. */
    final AtomicLong bypassedWhileHeld = new AtomicLong();

    /** Lag in ms at {@code nowMs}: the age of the oldest change waiting to be applied, 0 when none waits. */
    public long lagMs(long nowMs) {
        long since = waitingSinceCommitMs.get();
        return since == 0 ? 0 : Math.max(0, nowMs - since);
    }

    public long retainedWalBytes() {
        return retainedWalBytes.get();
    }

    /** This process holds the tail lease and streams; false while it stands by. */
    public boolean active() {
        return active.get();
    }

    public long lastTickMs() {
        return lastTickMs.get();
    }

    public long skippedWhileHeld() {
        return skippedWhileHeld.get();
    }

    public long bypassedWhileHeld() {
        return bypassedWhileHeld.get();
    }

    public long commitWaits() {
        return commitWaits.get();
    }

    public long applyRetries() {
        return applyRetries.get();
    }

    public long leaseLapses() {
        return leaseLapses.get();
    }

    public long restarts() {
        return restarts.get();
    }

    public StageTimes stages() {
        return stages;
    }

    public long events() {
        return events.get();
    }

    public long appliedLsn() {
        return appliedLsn.get();
    }

    public long reconciled() {
        return reconciled.get();
    }
}
