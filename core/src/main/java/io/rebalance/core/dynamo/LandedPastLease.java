package io.rebalance.core.dynamo;

import io.rebalance.protocol.lease.LeaseLost;
import java.util.List;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * A fenced batch whose last byte was sent while its lease held, but whose lease was found lost when the call ended:
 * the whole process paused between the last check and the bytes leaving (SIGSTOP, a collector's pause), so the
 * batch may have landed after another holder took over. Its requests name the keys to write again from the source
 * ({@code ItemWriter}); {@link #lost} says who holds the lease now.
 */
public final class LandedPastLease extends RuntimeException {
    private final transient List<WriteRequest> requests;

    LandedPastLease(List<WriteRequest> requests, LeaseLost lost) {
        super(
                lost.getMessage() + "; the batch of " + requests.size()
                        + " was sent before the loss was seen, so it may" + " have landed after the lease passed",
                lost);
        this.requests = List.copyOf(requests);
    }

    /** The batch that may have landed late. */
    public List<WriteRequest> requests() {
        return requests;
    }

    /** The loss, as the lease's last check found it. */
    public LeaseLost lost() {
        return (LeaseLost) getCause();
    }
}
