package io.rebalance.core.dynamo;

import io.rebalance.core.retry.Backoff;
import io.rebalance.core.retry.Retrier;
import io.rebalance.protocol.lease.LeaseLost;
import io.rebalance.protocol.lease.WriteFence;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemResponse;
import software.amazon.awssdk.services.dynamodb.model.ConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.PutRequest;
import software.amazon.awssdk.services.dynamodb.model.ReturnConsumedCapacity;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * Writes items with BatchWriteItem, at most 25 per call, and resubmits whatever DynamoDB hands back as
 * UnprocessedItems (it does so under throttling) with backoff until every item is written. Puts overwrite, so a
 * page written twice (a worker resumed from a slightly older last_id) leaves the same items: writes are
 * idempotent, which is what makes resuming safe. Its {@link WritePacer} is asked before each batch and told what
 * each call cost. A lease holder passes its {@link WriteFence}: then no call or attempt
 * is sent, resubmissions and SDK retries included, that could land after the lease passed to another holder; a batch
 * sent whole whose lease is gone when its call ends is handed back as {@link LandedPastLease}.
 */
public final class BatchWriter {
    /** The most requests one BatchWriteItem call takes (DynamoDB's limit). */
    public static final int MAX_BATCH = 25;

    private final DynamoDbClient dynamo;
    private final String table;
    private final int batchSize;
    private final Retrier retrier;
    private final Backoff unprocessedBackoff;
    private final WritePacer pacer;

    public BatchWriter(DynamoDbClient dynamo, String table, int batchSize, Retrier retrier, WritePacer pacer) {
        this.dynamo = dynamo;
        this.table = table;
        this.batchSize = batchSize;
        this.retrier = retrier;
        this.pacer = pacer;
        this.unprocessedBackoff = Backoff.DEFAULT;
    }

    /** An item as a put request, the one way every writer wraps an item it sends. */
    public static WriteRequest put(Map<String, AttributeValue> item) {
        return WriteRequest.builder()
                .putRequest(PutRequest.builder().item(item).build())
                .build();
    }

    /**
     * Sends puts and deletes in batches, every call and every attempt bound to {@code fence} (a lease holder's writes,
     * ADR 6; {@link WriteFence#NONE} for none), or throws once retries are spent (nothing is silently dropped).
     *
     * @throws LeaseLost when the lease is gone before every request is written; what was written stays
     */
    public void apply(List<WriteRequest> requests, WriteFence fence) throws InterruptedException {
        for (List<WriteRequest> batch : batches(requests)) writeBatch(batch, pacer.acquire(batch), fence);
    }

    /** {@code requests} cut into the batches this writer sends, each one call: the one place a batch is cut. */
    public List<List<WriteRequest>> batches(List<WriteRequest> requests) {
        List<List<WriteRequest>> out = new ArrayList<>((requests.size() + batchSize - 1) / batchSize);
        for (int i = 0; i < requests.size(); i += batchSize) {
            out.add(requests.subList(i, Math.min(requests.size(), i + batchSize)));
        }
        return out;
    }

    private void writeBatch(List<WriteRequest> batch, long reserved, WriteFence fence) throws InterruptedException {
        List<WriteRequest> pending = batch;
        for (int attempt = 0; !pending.isEmpty(); attempt++) {
            if (attempt > 0) {
                if (attempt >= 50) {
                    throw new IllegalStateException(pending.size() + " items stayed unprocessed by DynamoDB after 50"
                            + " resubmissions to " + table + "; the table is throttled: lower mover.writeUnits or"
                            + " mover.rateLimit");
                }
                // backoff: DynamoDB hands items back when throttled, and resubmitting at once only repeats that
                Thread.sleep(unprocessedBackoff.delay(Math.min(attempt, 6)).toMillis());
            }
            List<WriteRequest> toSend = pending;
            long paid = attempt == 0 ? reserved : pacer.reacquire(toSend); // items handed back go in turn, too
            long throttledBefore = DynamoCounts.process().throttled();
            AtomicBoolean released = new AtomicBoolean(); // an attempt's last byte passed its check: it may land
            BatchWriteItemResponse r;
            try {
                r = retrier.call("write batch to " + table, () -> {
                    BatchWriteItemRequest.Builder request =
                            BatchWriteItemRequest.builder().requestItems(Map.of(table, toSend));
                    if (pacer.meters()) request.returnConsumedCapacity(ReturnConsumedCapacity.TOTAL);
                    try {
                        return dynamo.batchWriteItem(FencedWrites.bind(request.build(), fence, released));
                    } catch (RuntimeException e) {
                        LeaseLost lost = LeaseLost.in(e); // the SDK wraps what the fence's check before sending threw
                        throw lost != null ? lost : e;
                    }
                });
            } catch (RuntimeException e) { // counted as consuming nothing: the schedule gives its turn back
                pacer.settled(paid, 0, DynamoCounts.process().throttled() > throttledBefore);
                if (released.get()) heldThrough(fence, toSend);
                throw e;
            }
            pending = r.hasUnprocessedItems() ? r.unprocessedItems().getOrDefault(table, List.of()) : List.of();
            // an attempt the SDK retried as throttled shows in the process's counts (any thread's: throttling is
            // the table's, whoever met it)
            boolean throttled = !pending.isEmpty() || DynamoCounts.process().throttled() > throttledBefore;
            pacer.settled(paid, consumed(r), throttled);
            if (released.get()) heldThrough(fence, toSend);
        }
    }

    /**
     * After a call that sent a batch whole: the lease still held proves nobody else held it since, so the batch landed
     * (if at all) within it. @throws LandedPastLease when the lease is gone: a pause after the last byte's check may
     * have let the batch land after another holder took over
     */
    private static void heldThrough(WriteFence fence, List<WriteRequest> batch) {
        if (fence == WriteFence.NONE) return;
        try {
            fence.beforeWrite();
        } catch (LeaseLost lost) {
            throw new LandedPastLease(batch, lost);
        }
    }

    /** The units DynamoDB said a call consumed, tables and indexes together; NaN when it did not say. */
    private static double consumed(BatchWriteItemResponse r) {
        if (!r.hasConsumedCapacity() || r.consumedCapacity().isEmpty()) return Double.NaN;
        double units = 0;
        for (ConsumedCapacity c : r.consumedCapacity()) if (c.capacityUnits() != null) units += c.capacityUnits();
        return units;
    }
}
