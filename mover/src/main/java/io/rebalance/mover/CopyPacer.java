package io.rebalance.mover;

import io.rebalance.core.codec.ItemSize;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.WriteCapacity;
import io.rebalance.core.dynamo.WritePacer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * The copy's pace: the run's rows/s limit ({@link GlobalRateLimiter}) and its write-unit budget
 * ({@link WriteUnitBudget}), both shared by every process. Before a batch: its rows, then its units, estimated from
 * the items' sizes as DynamoDB bills them. After each call: what it consumed (DynamoDB's word on one call in
 * {@link #METER_EVERY}, the others' estimates scaled by those), summed here and reported with the heartbeat, and
 * throttling, reported at once so that every process slows down.
 *
 * <p>A coordinator failure lets the batch through, as the rows limiter does: a pacer must not stop a copy that the
 * coordinator will stop anyway at its next progress save.
 */
final class CopyPacer implements WritePacer {
    private static final Logger log = LoggerFactory.getLogger(CopyPacer.class);
    /** A process reports throttling at most this often; the budget lowers the rate at most once per 2 s anyway. */
    private static final long THROTTLE_REPORT_NANOS = TimeUnit.MILLISECONDS.toNanos(250);
    /** One call in this many asks DynamoDB for the capacity it consumed (see {@link #meters()}). */
    static final int METER_EVERY = 16;

    private final GlobalRateLimiter rows;
    private final WriteUnitBudget budget;
    private final String indexAttribute;
    private final AtomicLong calls = new AtomicLong();
    /** What the metered calls reported, and what they were estimated at: the others' estimates are scaled by it. */
    private final DoubleAdder meteredConsumed = new DoubleAdder();

    private final DoubleAdder meteredEstimate = new DoubleAdder();
    private final DoubleAdder consumedSinceReport = new DoubleAdder();
    private final DoubleAdder correction = new DoubleAdder();
    private final DoubleAdder consumed = new DoubleAdder();
    private final LongAdder throttled = new LongAdder();
    private volatile WriteUnitBudget.Snapshot last = WriteUnitBudget.Snapshot.NONE;
    private volatile long lastThrottleReport = System.nanoTime() - THROTTLE_REPORT_NANOS;
    private final CountDownLatch stopped = new CountDownLatch(1);

    /** @param indexAttribute the attribute that puts an item in the slot index (it writes the item twice); "" for none */
    CopyPacer(GlobalRateLimiter rows, WriteUnitBudget budget, String indexAttribute) {
        this.rows = rows;
        this.budget = budget;
        this.indexAttribute = indexAttribute;
    }

    /**
     * What a process does as it joins: the run's budget from {@code mover.writeUnits} unless it has one, the
     * on-demand ramp for an on-demand table, and the table's warm throughput raised to {@code target.warmWriteUnits}.
     */
    void start(MigrationConfig config, DynamoDbClient dynamo) {
        String table = config.target().table();
        long warm = config.target().warmWriteUnits();
        if (warm > 0) {
            String refused = WriteCapacity.warm(dynamo, table, warm);
            if (refused != null)
                log.warn("the warm throughput of {} stays as it was ({}); the copy goes on without it", table, refused);
        }
        if (config.mover().writeUnits() > 0) budget.startCeiling(config.mover().writeUnits());
        WriteCapacity capacity = WriteCapacity.of(dynamo, table);
        if (capacity.onDemand()) budget.startRamp(Math.max(warm, capacity.warmWriteUnits()));
        heartbeat(rows.limit());
    }

    @Override
    public long acquire(List<WriteRequest> batch) throws InterruptedException {
        rows.acquire(batch.size());
        return reacquire(batch);
    }

    /** @return the batch's units as estimated, taken from the run's budget when it has one */
    @Override
    public long reacquire(List<WriteRequest> batch) throws InterruptedException {
        long units = 0;
        for (WriteRequest w : batch) units += units(w);
        if (!last.on()) return units; // estimated all the same: calls not metered are counted at it
        WriteUnitBudget.Reservation r;
        try {
            r = budget.take(units);
        } catch (RuntimeException e) {
            return units;
        }
        // the batch's turn in the run's schedule, unless the process stops first
        if (r.waitMicros() > 0 && stopped.await(r.waitMicros(), TimeUnit.MICROSECONDS))
            throw new InterruptedException("the process stops: the batch is not sent");
        return units;
    }

    /**
     * The process stops: every batch waiting for its turn (rows or units) gives up with an
     * {@link InterruptedException}, and so does every later one; its worker gives its slot back. A batch already
     * sent is not touched: it lands within its lease, or is bound by it (ADR 6).
     */
    void stop() {
        rows.stop();
        stopped.countDown();
    }

    /** Write units one request costs as DynamoDB bills it: a unit per started KB, again for the slot index. */
    private long units(WriteRequest w) {
        if (w.putRequest() == null) return indexAttribute.isEmpty() ? 1 : 2; // a delete: its item's size is unknown
        Map<String, AttributeValue> item = w.putRequest().item();
        long bytes = ItemSize.of(item);
        long units = ItemSize.tableUnits(bytes);
        if (!indexAttribute.isEmpty() && item.containsKey(indexAttribute)) units += ItemSize.indexUnits(bytes);
        return units;
    }

    @Override
    public void settled(long reserved, double consumedUnits, boolean wasThrottled) {
        double c;
        if (Double.isNaN(consumedUnits)) { // not metered: the estimate, as the metered calls bear it out
            double estimated = meteredEstimate.sum();
            c = estimated > 0 ? reserved * meteredConsumed.sum() / estimated : reserved;
        } else {
            c = consumedUnits;
            if (consumedUnits > 0) {
                meteredConsumed.add(consumedUnits);
                meteredEstimate.add(reserved);
            }
        }
        consumed.add(c);
        consumedSinceReport.add(c);
        correction.add(c - reserved);
        if (!wasThrottled) return;
        throttled.increment();
        long now = System.nanoTime();
        if (now - lastThrottleReport < THROTTLE_REPORT_NANOS) return;
        lastThrottleReport = now;
        try {
            last = budget.report(0, 0, true);
        } catch (RuntimeException e) {
            log.debug("throttling not reported ({}); the next heartbeat tries again", e.toString());
        }
    }

    /**
     * One call in {@link #METER_EVERY} asks DynamoDB what it consumed; the others are settled at their estimate
     * scaled by what the asked ones reported against theirs. Asking on every call cost DynamoDB Local about 40% more
     * CPU a row and the copy a third of its rate (bench/README.md, copy.sh); DynamoDB bills by the same item sizes
     * the estimate counts, so one call in sixteen keeps the figure and the budget's correction honest.
     */
    @Override
    public boolean meters() {
        return calls.getAndIncrement() % METER_EVERY == 0;
    }

    /** Once a second: the rows limit as the run has it now, and the units consumed since the last beat reported. */
    void heartbeat(long rowsPerSecond) {
        rows.setLimit(rowsPerSecond);
        report();
    }

    /** Reports the units consumed since the last report (the heartbeat's, and the last one as the process stops). */
    void report() {
        double c = consumedSinceReport.sumThenReset();
        double d = correction.sumThenReset();
        try {
            last = budget.report(c, d, false);
        } catch (RuntimeException e) {
            consumedSinceReport.add(c); // reported with the next beat
            correction.add(d);
            throw e;
        }
    }

    long rowsPerSecond() {
        return rows.limit();
    }

    /** The budget as this process last heard of it. */
    WriteUnitBudget.Snapshot budget() {
        return last;
    }

    /** Write units this process's calls consumed: as DynamoDB reported them, or their estimates scaled by those. */
    double consumed() {
        return consumed.sum();
    }

    /** Calls of this process DynamoDB throttled (items handed back, or an attempt refused). */
    long throttled() {
        return throttled.sum();
    }
}
