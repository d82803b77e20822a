package io.rebalance.cutover;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import software.amazon.awssdk.services.dynamodb.model.GetRecordsRequest;
import software.amazon.awssdk.services.dynamodb.model.GetRecordsResponse;
import software.amazon.awssdk.services.dynamodb.model.Record;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/**
 * A DynamoDB Streams client whose records arrive {@code delay} late, as DynamoDB Streams on AWS may deliver them (it
 * promises no bound): a read that meets a record first seen less than {@code delay} ago returns nothing and the same
 * iterator, so the shard is read again from there later. DynamoDB Local, unlike AWS, has every record at once.
 */
final class DelayedStreams extends ForwardingStreams {
    private final long delayMs;
    private final Map<String, Long> firstSeen = new ConcurrentHashMap<>();
    private final AtomicInteger heldBack = new AtomicInteger();
    private final Predicate<Record> which;

    DelayedStreams(DynamoDbStreamsClient real, Duration delay) {
        this(real, delay, r -> true);
    }

    /** @param which the records that arrive late (the others as soon as nothing late is before them in the shard) */
    DelayedStreams(DynamoDbStreamsClient real, Duration delay, Predicate<Record> which) {
        super(real);
        this.delayMs = delay.toMillis();
        this.which = which;
    }

    /** How many reads returned nothing because a record was not due yet. */
    int heldBack() {
        return heldBack.get();
    }

    @Override
    public GetRecordsResponse getRecords(GetRecordsRequest request) {
        GetRecordsResponse got = real.getRecords(request);
        long now = System.currentTimeMillis();
        long newest = 0;
        for (Record r : got.records()) { // every record of the batch is seen now, not only up to the first held one
            long seen = firstSeen.computeIfAbsent(r.dynamodb().sequenceNumber(), k -> now);
            if (which.test(r)) newest = Math.max(newest, seen);
        }
        if (got.records().isEmpty() || newest == 0 || now - newest >= delayMs) return got;
        heldBack.incrementAndGet();
        return got.toBuilder()
                .records(List.of())
                .nextShardIterator(request.shardIterator())
                .build();
    }
}
