package io.rebalance.core.dynamo;

import io.rebalance.core.retry.Backoff;
import io.rebalance.core.retry.Retrier;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemResponse;
import software.amazon.awssdk.services.dynamodb.model.PutRequest;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * Writes items with BatchWriteItem, at most 25 per call, and resubmits whatever DynamoDB hands back as
 * UnprocessedItems (it does so under throttling) with backoff until every item is written. Puts overwrite, so a
 * page written twice (a worker resumed from a slightly older last_id) leaves the same items: writes are
 * idempotent, which is what makes resuming safe.
 */
public final class BatchWriter {
    private final DynamoDbClient dynamo;
    private final String table;
    private final int batchSize;
    private final Retrier retrier;
    private final Backoff unprocessedBackoff;
    private final RateLimiter limiter;

    /** Blocks until {@code rows} more rows may be written (the mover's global rate limiter). */
    @FunctionalInterface
    public interface RateLimiter {
        void acquire(int rows) throws InterruptedException;

        RateLimiter NONE = rows -> {};
    }

    public BatchWriter(DynamoDbClient dynamo, String table, int batchSize, Retrier retrier, RateLimiter limiter) {
        this.dynamo = dynamo;
        this.table = table;
        this.batchSize = batchSize;
        this.retrier = retrier;
        this.limiter = limiter;
        this.unprocessedBackoff = Backoff.DEFAULT;
    }

    /** Called before each batch; throws to stop writing (a worker whose lease is gone must not write on). */
    @FunctionalInterface
    public interface BeforeBatch {
        void check();

        BeforeBatch NONE = () -> {};
    }

    /** Writes every item, or throws once retries are spent (nothing is silently dropped). */
    public void write(List<Map<String, AttributeValue>> items) throws InterruptedException {
        write(items, BeforeBatch.NONE);
    }

    /** As {@link #write(List)}, calling {@code beforeBatch} before each batch (after waiting for the rate limit). */
    public void write(List<Map<String, AttributeValue>> items, BeforeBatch beforeBatch) throws InterruptedException {
        for (int i = 0; i < items.size(); i += batchSize) {
            List<WriteRequest> batch = new ArrayList<>(batchSize);
            for (Map<String, AttributeValue> item : items.subList(i, Math.min(items.size(), i + batchSize))) {
                batch.add(WriteRequest.builder()
                        .putRequest(PutRequest.builder().item(item).build())
                        .build());
            }
            limiter.acquire(batch.size());
            beforeBatch.check();
            writeBatch(batch);
        }
    }

    /** Sends puts and deletes (a repair), in batches, with the same resubmission and rate limit as items. */
    public void apply(List<WriteRequest> requests) throws InterruptedException {
        for (int i = 0; i < requests.size(); i += batchSize) {
            List<WriteRequest> batch = requests.subList(i, Math.min(requests.size(), i + batchSize));
            limiter.acquire(batch.size());
            writeBatch(batch);
        }
    }

    private void writeBatch(List<WriteRequest> batch) throws InterruptedException {
        List<WriteRequest> pending = batch;
        for (int attempt = 0; !pending.isEmpty(); attempt++) {
            if (attempt > 0) {
                if (attempt >= 50) {
                    throw new IllegalStateException(pending.size() + " items stayed unprocessed by DynamoDB after 50"
                            + " resubmissions to " + table + "; the table is throttled: lower mover.rateLimit");
                }
                // backoff: DynamoDB hands items back when throttled, and resubmitting at once only repeats that
                Thread.sleep(unprocessedBackoff.delay(Math.min(attempt, 6)).toMillis());
            }
            List<WriteRequest> toSend = pending;
            BatchWriteItemResponse r = retrier.call(
                    "write batch to " + table, () -> dynamo.batchWriteItem(b -> b.requestItems(Map.of(table, toSend))));
            pending = r.hasUnprocessedItems() ? r.unprocessedItems().getOrDefault(table, List.of()) : List.of();
        }
    }
}
