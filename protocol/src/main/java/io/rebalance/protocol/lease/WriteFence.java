package io.rebalance.protocol.lease;

import java.time.Duration;

/**
 * What a writer that holds a lease asks before each write reaches a store: how long it may still write. A DynamoDB
 * call is given at most that long, and each of its attempts is checked again just before it is sent
 * ({@code core/dynamo/FencedWrites}), so no attempt can land after the lease may have passed to another holder
 * (ADR 6 states the bound). {@link #NONE} is for writers that hold no lease (a repair without a tail, the demo).
 */
public interface WriteFence {
    /**
     * Called before a call and before every attempt of it, resubmissions and SDK retries included.
     *
     * @return the time left in which a write started now lands within the lease; renews the lease first when less is
     *     left than a write needs
     * @throws LeaseLost when the lease is gone, or will be before a write started now could land
     */
    Duration beforeWrite();

    WriteFence NONE = () -> null;
}
