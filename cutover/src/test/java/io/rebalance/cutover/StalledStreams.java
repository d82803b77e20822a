package io.rebalance.cutover;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import software.amazon.awssdk.services.dynamodb.model.GetRecordsRequest;
import software.amazon.awssdk.services.dynamodb.model.GetRecordsResponse;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/**
 * A DynamoDB Streams client whose GetRecords calls each take {@code stall} once armed, as a slow or far DynamoDB
 * answers: a round that reads a batch and then the shard's next page lasts at least two stalls. The read of that next
 * page is a moment known to be in the middle of a round, and at its end the client runs {@code midRound}.
 */
final class StalledStreams extends ForwardingStreams {
    private final long stallNanos;
    private final Runnable midRound;
    private final AtomicBoolean armed = new AtomicBoolean();
    /** The next iterators of batches that held records: the reverse stream reads each again in the same round. */
    private final Set<String> continuing = ConcurrentHashMap.newKeySet();

    StalledStreams(DynamoDbStreamsClient real, Duration stall, Runnable midRound) {
        super(real);
        this.stallNanos = stall.toNanos();
        this.midRound = midRound;
    }

    void arm() {
        armed.set(true);
    }

    @Override
    public GetRecordsResponse getRecords(GetRecordsRequest request) {
        GetRecordsResponse got = real.getRecords(request);
        if (!armed.get()) return got;
        long until = System.nanoTime() + stallNanos; // the stall injected: the reply is slow, not lost
        for (long left = stallNanos; left > 0; left = until - System.nanoTime()) LockSupport.parkNanos(left);
        if (continuing.remove(request.shardIterator())) midRound.run();
        if (!got.records().isEmpty() && got.nextShardIterator() != null) continuing.add(got.nextShardIterator());
        return got;
    }
}
