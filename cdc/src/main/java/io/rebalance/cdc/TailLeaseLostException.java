package io.rebalance.cdc;

/** This tail no longer holds the lease: another took over, so this one must stop writing at once. */
public final class TailLeaseLostException extends RuntimeException {
    public TailLeaseLostException(String message) {
        super(message);
    }
}
