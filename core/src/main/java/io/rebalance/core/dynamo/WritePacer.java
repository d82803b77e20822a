package io.rebalance.core.dynamo;

import java.util.List;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * Paces a {@link BatchWriter}: asked before each batch is sent, told what each call cost. The copy's pacer holds the
 * run's limits (rows/s, write units/s) shared by every process; the other writers send as they come.
 */
public interface WritePacer {
    /**
     * Blocks until {@code batch} may be sent.
     *
     * @return the write units reserved for it (an estimate from the items' sizes), 0 when units are not counted
     */
    long acquire(List<WriteRequest> batch) throws InterruptedException;

    /**
     * Blocks until items DynamoDB handed back may be sent again: they cost units again, not rows.
     *
     * @return the write units reserved for them, 0 when units are not counted
     */
    default long reacquire(List<WriteRequest> handedBack) throws InterruptedException {
        return 0;
    }

    /**
     * What one call cost.
     *
     * @param reserved what {@link #acquire} or {@link #reacquire} reserved for the call
     * @param consumed the write units DynamoDB said the call consumed, table and indexes; NaN when it did not say, 0
     *     for a call that failed
     * @param throttled whether DynamoDB handed items back or refused an attempt as throttled
     */
    default void settled(long reserved, double consumed, boolean throttled) {}

    /**
     * Whether the call about to be sent asks DynamoDB for the capacity it consumed ({@code ReturnConsumedCapacity});
     * asked once for each call.
     */
    default boolean meters() {
        return false;
    }

    /** No pacing: every batch goes at once. */
    WritePacer NONE = batch -> 0;
}
