package io.rebalance.mover;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.core.copy.CopyStatus;
import io.rebalance.core.copy.RunPlan;
import io.rebalance.core.copy.RunStatus;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.slot.SlotRange;
import io.rebalance.protocol.lease.LeaseStore;
import io.rebalance.protocol.lease.OwnedLease;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every process runs a keeper candidate; one lease ({@link Coordinator#keeperLease}) makes exactly one of them
 * active. The active keeper, each tick:
 * <ol>
 *   <li>settles commanded statuses: TO_START becomes IN_PROGRESS; TO_STOP becomes STOPPED once no live process
 *       holds a slot;
 *   <li>compacts: walks from the watermark towards older slots while they are FINISHED, moves the watermark
 *       first and then lets the slot store forget them ({@link SlotStore#forget}), so Redis holds a few keys
 *       whatever the run's length, Postgres its rows (the order matters: a worker that acquires a slot re-reads the
 *       watermark, see {@link SlotWorker});
 *   <li>marks the run FINISHED when the watermark reaches the oldest slot;
 *   <li>publishes progress (rows, rows/s, ETA, slots) for `rebalance status` and logs it.
 * </ol>
 * A keeper that dies simply stops renewing; a standby takes over within the lease TTL. Nothing the keeper writes
 * is needed for correctness of the copy itself, only for its completion and its visibility.
 */
public final class Keeper {
    private static final Logger log = LoggerFactory.getLogger(Keeper.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Bounds the work of one tick after a long outage of the keeper; the next tick continues. */
    private static final int MAX_COMPACT_PER_TICK = 5_000;

    private final Coordinator coordinator;
    private final RunState run;
    private final SlotStore slots;
    private final RunPlan plan;
    private final SlotRange range;
    private final String owner;
    private final LeaseStore leases;
    private final Duration leaseTtl;
    private final long processTimeoutMs;
    private final Duration logEvery;

    private boolean active;
    private OwnedLease lease;
    /** (ms, rows copied) samples of the last {@link #RATE_WINDOW_MS}: ticks are irregular (a finished slot nudges one). */
    private final ArrayDeque<long[]> samples = new ArrayDeque<>();

    private long lastLogMs;
    private final WriteUnitBudget budget;

    private static final long RATE_WINDOW_MS = 10_000;

    public Keeper(Coordinator coordinator, RunPlan plan, String owner, Duration leaseTtl, Duration logEvery) {
        this.coordinator = coordinator;
        this.run = coordinator.run();
        this.slots = coordinator.slots();
        this.plan = plan;
        this.range = plan.range();
        this.owner = owner;
        this.leases = coordinator.leases();
        this.leaseTtl = leaseTtl;
        this.processTimeoutMs = leaseTtl.toMillis();
        this.logEvery = logEvery;
        this.budget = coordinator.budget();
    }

    /**
     * One keeper step; a coordinator's failure propagates and the caller ticks again later.
     *
     * @return the run status after the step when this keeper is active, null when it is on standby
     */
    public RunStatus tick() {
        OwnedLease.Attempt claim = OwnedLease.acquire(leases, coordinator.keeperLease(), owner, leaseTtl);
        lease = claim.lease();
        boolean held = lease != null;
        if (held != active) {
            log.info(held ? "keeper: active ({})" : "keeper: standby ({})", owner);
            active = held;
        }
        if (!held) return null;
        RunStatus status = run.status();
        if (status == RunStatus.TO_START) status = run.compareAndSet(RunStatus.TO_START, RunStatus.IN_PROGRESS);
        if (status == RunStatus.TO_STOP && busySlots() == 0) {
            status = run.compareAndSet(RunStatus.TO_STOP, RunStatus.STOPPED);
            if (status == RunStatus.STOPPED) log.info("keeper: every process has released its slots; run is STOPPED");
        }
        lease.check(); // each write below is made only while the lease is this keeper's
        Slot watermark = compact();
        if (watermark != null && watermark.equals(range.last()) && status != RunStatus.FINISHED) {
            status = run.compareAndSet(status, RunStatus.FINISHED);
            if (status == RunStatus.FINISHED) log.info("keeper: every slot is finished; run is FINISHED");
        }
        lease.check();
        run.pruneProcesses(processTimeoutMs);
        publishProgress(status, watermark);
        ramp();
        return status;
    }

    /** @return the watermark after compaction, or null while no slot is compacted */
    Slot compact() {
        Slot watermark = run.watermark();
        Slot next = watermark == null ? range.newest() : range.after(watermark);
        List<Slot> done = new ArrayList<>();
        while (next != null
                && range.contains(next)
                && done.size() < MAX_COMPACT_PER_TICK
                && "FINISHED".equals(slots.state(next).get("status"))) {
            done.add(next);
            next = range.after(next);
        }
        if (done.isEmpty()) return watermark;
        Slot newWatermark = done.get(done.size() - 1);
        if (lease != null) lease.check();
        run.setWatermark(newWatermark); // first the watermark, then the states it now stands for
        slots.forget(done);
        return newWatermark;
    }

    private long busySlots() {
        long busy = 0;
        for (String info : run.liveProcesses(processTimeoutMs).values()) {
            try {
                JsonNode n = JSON.readTree(info);
                busy += n.path("slots").size();
            } catch (Exception e) {
                busy++; // unreadable info: assume busy rather than declare STOPPED too early
            }
        }
        return busy;
    }

    private void publishProgress(RunStatus status, Slot watermark) {
        long now = System.currentTimeMillis();
        long rows = run.rowsCopied();
        samples.addLast(new long[] {now, rows});
        while (samples.size() > 2 && now - samples.peekFirst()[0] > RATE_WINDOW_MS) samples.removeFirst();
        long[] first = samples.peekFirst();
        double rate = !status.copying() || now - first[0] < 1_000 ? 0 : (rows - first[1]) * 1000.0 / (now - first[0]);
        long total = range.count();
        long compacted = watermark == null ? 0 : range.through(watermark);
        long finished = Math.min(total, Math.max(compacted, run.slotsFinished()));
        long left = Math.max(0, plan.estimatedRows() - rows);
        long etaSeconds = rate > 1 && plan.estimatedRows() > 0 ? (long) (left / rate) : -1;
        run.writeProgress(new CopyStatus(
                true,
                status.name(),
                rows,
                Math.round(rate),
                etaSeconds,
                total,
                finished,
                compacted,
                watermark == null ? "" : watermark.name(),
                owner,
                now));
        coordinator.sampleProgress(now, rows, Math.round(rate)); // the dashboard's chart of the last hour
        if (now - lastLogMs >= logEvery.toMillis()) {
            lastLogMs = now;
            log.debug(
                    "progress: {} slots {}/{} rows {} ({}/s){}",
                    status,
                    finished,
                    total,
                    rows,
                    Math.round(rate),
                    etaSeconds >= 0 ? " eta " + Duration.ofSeconds(etaSeconds) : "");
        }
    }

    /** On an on-demand table: the ramp's cap from the peak the copy consumed (OnDemandRamp). */
    private void ramp() {
        OnDemandRamp.State s = budget.ramp();
        if (s.warm() <= 0) return;
        OnDemandRamp.State next = OnDemandRamp.next(s, budget.read().consumedPerSecond(), System.currentTimeMillis());
        budget.saveRamp(next, OnDemandRamp.cap(next));
    }

    /** Gives the keeper lease up at shutdown so a standby takes over at once instead of after the TTL. */
    public void resign() {
        if (active && lease != null) lease.release();
        active = false;
    }

    public boolean active() {
        return active;
    }
}
