package io.rebalance.mover;

import io.rebalance.core.codec.RowCodec;
import io.rebalance.core.config.Durations;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.copy.ItemWriter;
import io.rebalance.core.copy.RunPlan;
import io.rebalance.core.copy.RunStatus;
import io.rebalance.core.dynamo.BatchWriter;
import io.rebalance.core.refused.RefusedRows;
import io.rebalance.core.retry.Retrier;
import io.rebalance.core.retry.Transience;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.source.PageReader;
import io.rebalance.core.source.SchemaWatch;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.protocol.ProcessId;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * One {@code rebalance copy} process: a manager (the thread that calls {@link #run()}) that hands slots to a pool
 * of worker threads, a keeper candidate, and a heartbeat. Any number of these processes cooperate through the
 * coordinator (Redis or Postgres).
 *
 * <p>The three layers of recovery: each service call retries with backoff ({@link Retrier}); a failed slot step is
 * retried by its worker after {@code mover.slotRetryDelay} from the saved progress ({@link SlotWorker}); and the
 * outermost loops here catch everything, log it, and go on, so no failure ends the process short of a shutdown.
 *
 * <p>The global status drives it: workers copy while it is TO_START or IN_PROGRESS, release their slots when it is
 * TO_STOP or STOPPED (and wait for a start), and {@link #run()} returns when it is FINISHED or on {@link #shutdown()}.
 */
public final class MoverProcess implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MoverProcess.class);

    private final MigrationConfig config;
    private final RunPlan plan;
    private final RunState run;
    private final SlotStore slots;
    private final CopyPacer pacer;
    private final Retrier retrier = Retrier.standard();
    private final Keeper keeper;
    private final DynamoDbClient dynamo;
    private final MoverCounters counters = new MoverCounters();

    private final String processId;
    private final AtomicLong ownerSeq = new AtomicLong();
    private final Map<Slot, String> busy = new ConcurrentHashMap<>();
    private final Picker picker;
    private final SynchronousQueue<Picker.Assignment> handoff = new SynchronousQueue<>();
    private final Semaphore idleWorkers;
    private final FreeSlotWait freeSlot;
    private final CountDownLatch done = new CountDownLatch(1);
    private final ScheduledExecutorService background = Executors.newScheduledThreadPool(2, r -> {
        Thread t = new Thread(r, "rebalance-keeper");
        t.setDaemon(true);
        return t;
    });
    private final Heartbeat heartbeat;
    private final KeeperTicks keeperTicks;
    private final List<Thread> workers;
    /** The longest a stop waits for all its workers; one still writing after it is left to its lease. */
    static final Duration WORKERS_STOP = Duration.ofSeconds(15);

    private volatile RunStatus status = RunStatus.NOT_STARTED;
    private volatile boolean shuttingDown;
    /** Set when the table's columns changed under the run: the process stops, and says why. */
    private volatile String schemaChange;

    private final SchemaWatch schemaWatch;

    /** @param refused where rows DynamoDB cannot hold are recorded */
    public MoverProcess(
            MigrationConfig config,
            SourceTable table,
            RunPlan plan,
            Coordinator coordinator,
            RefusedRows refused,
            DynamoDbClient dynamo,
            PhaseHooks hooks) {
        this.config = config;
        this.plan = plan;
        var m = config.mover();
        this.run = coordinator.run();
        this.slots = coordinator.slots();
        this.pacer = new CopyPacer(
                new GlobalRateLimiter(coordinator.rateWindows(), m.rateLimit()),
                coordinator.budget(),
                config.target().slotIndex().isEmpty() ? "" : config.target().slotAttribute());
        this.dynamo = dynamo;
        RowCodec codec = table.codec(config.target());
        PageReader reader = new PageReader(table);
        BatchWriter writer = new BatchWriter(dynamo, config.target().table(), m.batchSize(), retrier, pacer);
        WorkerContext shared = new WorkerContext(
                slots,
                run,
                codec,
                reader,
                new SourceSession(config.source()),
                new ItemWriter(reader, codec, writer),
                refused,
                retrier,
                hooks,
                m.pageSize(),
                m.leaseTtl(),
                counters);
        this.schemaWatch = new SchemaWatch(new SourceSession(config.source()), config, table.schema());
        this.processId = ProcessId.create();
        this.keeper = new Keeper(coordinator, plan, processId, m.leaseTtl(), Duration.ofSeconds(10));
        this.keeperTicks = new KeeperTicks(keeper, background, s -> status = s);
        this.picker = Picker.of(slots, run, plan.range(), this::newOwner);
        this.idleWorkers = new Semaphore(m.workers());
        this.freeSlot = new FreeSlotWait(m.slotRetryDelay(), run);
        this.workers = new ArrayList<>();
        for (int i = 0; i < m.workers(); i++) {
            SlotWorker w = new SlotWorker(shared, "w" + i);
            Thread t = new Thread(() -> workerLoop(w), "rebalance-worker-" + i);
            t.setDaemon(true);
            workers.add(t);
        }
        this.heartbeat = new Heartbeat(
                run,
                processId,
                pacer,
                counters,
                () -> ProcessInfo.json(workers.size(), busy, counters.rowsWritten(), keeper.active(), rateLimit()),
                s -> status = s);
    }

    /** Runs until the run is FINISHED or {@link #shutdown()} is called. @return the last status seen */
    public RunStatus run() throws InterruptedException {
        log.info(
                "process {} joins run of {} ({} slots {}..{}) with {} workers",
                processId,
                plan.table(),
                plan.range().count(),
                plan.newest(),
                plan.oldest(),
                workers.size());
        if (config.mover().rateLimit() > 0 && run.rateLimit() == 0)
            run.setRateLimit(config.mover().rateLimit());
        retrier.run("start the write-unit budget", () -> pacer.start(config, dynamo));
        heartbeat.start();
        keeperTicks.start(config.mover().keeperInterval().toMillis());
        background.scheduleWithFixedDelay(this::watchSchema, 1, 1, TimeUnit.SECONDS);
        workers.forEach(Thread::start);
        try {
            manage();
        } finally {
            stopAll();
        }
        return status;
    }

    /**
     * The manager: offers the next free slot to an idle worker; when none is free, looks again as soon as one can be
     * ({@link FreeSlotWait}).
     */
    private void manage() throws InterruptedException {
        RunStatus reported = null;
        while (!shuttingDown) {
            try {
                RunStatus s = status;
                if (s != reported) {
                    log.info("run status {}{}", s, s == RunStatus.STOPPED ? "; waiting for `rebalance start`" : "");
                    reported = s;
                }
                if (s == RunStatus.FINISHED) return;
                if (!s.copying()) {
                    done.await(500, TimeUnit.MILLISECONDS);
                    continue;
                }
                if (!idleWorkers.tryAcquire(500, TimeUnit.MILLISECONDS)) continue;
                Picker.Assignment next = picker.next(busy.keySet(), () -> shuttingDown);
                if (next == null) { // every slot is finished or leased: look again as the first lease ends
                    idleWorkers.release();
                    freeSlot.await(picker.untilLeaseEnds(), () -> status.copying() && !shuttingDown);
                    continue;
                }
                busy.put(next.slot(), next.owner());
                // cannot fail with an idle permit; never leak a lease
                if (!handoff.offer(next, 5, TimeUnit.SECONDS)) {
                    busy.remove(next.slot());
                    slots.release(next.slot(), next.owner());
                    idleWorkers.release();
                }
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                log.warn(
                        "manager step failed; retrying in {}: {}",
                        Durations.format(config.mover().slotRetryDelay()),
                        e.toString());
                done.await(config.mover().slotRetryDelay().toMillis(), TimeUnit.MILLISECONDS);
            }
        }
    }

    private void workerLoop(SlotWorker worker) {
        MDC.put("worker", worker.name());
        MDC.put("phase", "copy");
        while (!shuttingDown) {
            Picker.Assignment a;
            try {
                a = handoff.poll(500, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                break;
            }
            if (a == null) continue;
            try {
                copySlot(worker, a);
            } catch (Throwable t) { // the outermost layer: log and take the next slot
                log.error("worker {}: unexpected failure on slot {}: {}", worker.name(), a.slot(), t.toString(), t);
                releaseQuietly(a);
            } finally {
                busy.remove(a.slot());
                idleWorkers.release();
            }
        }
        worker.closeConnection();
    }

    /** The slot-step layer: retry the slot from saved progress until it is finished, taken, or the run stops. */
    private void copySlot(SlotWorker worker, Picker.Assignment a) {
        int permanentFailures = 0;
        while (true) {
            try {
                SlotWorker.Outcome o = worker.copy(a.slot(), a.owner(), this::keepGoing);
                if (o == SlotWorker.Outcome.FINISHED) {
                    counters.slotFinished();
                    picker.finished(a.slot());
                    keeperTicks.nudge(); // compact now: it may be the last slot
                }
                if (o == SlotWorker.Outcome.STOPPED) freeSlot.slotGivenBack(a); // released between two pages
                return;
            } catch (InterruptedException e) {
                releaseQuietly(a);
                return;
            } catch (Exception | Error e) {
                counters.stepFailed();
                boolean permanent = !Transience.isRetriable(e);
                if (permanent && ++permanentFailures >= 3) {
                    log.error(
                            "slot {} failed 3 times for a reason retrying will not fix; leaving it for {} and moving on: {}",
                            a.slot(),
                            Durations.format(Picker.FAILED_SLOT_PAUSE),
                            SlotWorker.describe(e));
                    picker.failedPermanently(a.slot());
                    releaseQuietly(a);
                    return;
                }
                log.warn(
                        "slot {} step failed ({}); retrying from saved progress in {}",
                        a.slot(),
                        SlotWorker.describe(e),
                        Durations.format(config.mover().slotRetryDelay()));
                worker.closeConnection();
                if (!pause(config.mover().slotRetryDelay())) {
                    releaseQuietly(a);
                    return;
                }
            }
        }
    }

    private boolean keepGoing() {
        return !shuttingDown && status.copying();
    }

    /** @return false when the process or run stopped during the pause */
    private boolean pause(Duration d) {
        try {
            done.await(d.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        return keepGoing();
    }

    private void releaseQuietly(Picker.Assignment a) {
        try {
            slots.release(a.slot(), a.owner());
            freeSlot.slotGivenBack(a); // every waiting manager, here and in other processes, looks again now
        } catch (RuntimeException e) {
            log.debug("release of slot {} failed; its lease will expire: {}", a.slot(), e.toString());
            freeSlot.slotGivenBack();
        }
    }

    /**
     * Once a second: the table's copied columns must still be the plan's. Rows read after an ALTER TABLE would be
     * written in another shape than the rows before, silently; so the process stops and {@link #schemaChange} says
     * why (docs/schema-changes.md gives the way on). At most a page per worker is read in between.
     */
    private void watchSchema() {
        schemaWatch.changed().ifPresent(this::stopForSchema);
    }

    private void stopForSchema(String change) {
        if (schemaChange != null) return;
        schemaChange = change;
        log.error("the source table changed since the run was planned ({}): this process stops", change);
        run.event("schema-changed process=" + processId + " " + change);
        shutdown();
    }

    /** Why the process stopped on its own: the table's columns changed (empty when they did not). */
    public Optional<String> schemaChange() {
        return Optional.ofNullable(schemaChange);
    }

    /**
     * Asks the process to stop (SIGTERM, Ctrl-C): no slot is claimed; a worker waiting on the rate limit or budget gives
     * up at once, one writing lets its batch land; each gives its slot back, progress saved; {@link #run()} returns.
     */
    public void shutdown() {
        shuttingDown = true;
        done.countDown();
        pacer.stop();
    }

    private void stopAll() throws InterruptedException {
        shutdown();
        long until = System.nanoTime() + WORKERS_STOP.toNanos();
        for (Thread t : workers) t.join(Math.max(1, (until - System.nanoTime()) / 1_000_000));
        background.shutdownNow();
        background.awaitTermination(5, TimeUnit.SECONDS);
        heartbeat.close();
        schemaWatch.close();
        try {
            pacer.report(); // the units of the last second, which no heartbeat reported
        } catch (RuntimeException e) {
            log.debug("the last second's write units went unreported: {}", e.toString());
        }
        try {
            keeper.resign();
            run.leave(processId);
        } catch (RuntimeException e) {
            log.debug(
                    "leaving the run failed; the registry forgets this process after its heartbeat times out: {}",
                    e.toString());
        }
        log.info(
                "process {} stopped: {} rows written, {} slots finished",
                processId,
                counters.rowsWritten(),
                counters.slotsFinished());
    }

    @Override
    public void close() {
        shutdown();
    }

    private String newOwner() {
        return processId + "/" + ownerSeq.incrementAndGet();
    }

    public String processId() {
        return processId;
    }

    /** The run's rate limit as this process last read it, rows/s, 0 for none. */
    public long rateLimit() {
        return pacer.rowsPerSecond();
    }

    /** The run's write-unit budget as this process last heard of it. */
    public WriteUnitBudget.Snapshot writeUnits() {
        return pacer.budget();
    }

    /** Write units this process's calls consumed, as DynamoDB reported them. */
    public double writeUnitsConsumed() {
        return pacer.consumed();
    }

    public MoverCounters counters() {
        return counters;
    }
}
