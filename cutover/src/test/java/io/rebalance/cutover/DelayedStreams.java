package io.rebalance.cutover;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
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

    DelayedStreams(DynamoDbStreamsClient real, Duration delay) {
        super(real);
        this.delayMs = delay.toMillis();
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
            newest = Math.max(newest, firstSeen.computeIfAbsent(r.dynamodb().sequenceNumber(), k -> now));
        }
        if (got.records().isEmpty() || now - newest >= delayMs) return got;
        heldBack.incrementAndGet();
        return got.toBuilder()
                .records(List.of())
                .nextShardIterator(request.shardIterator())
                .build();
    }
}
