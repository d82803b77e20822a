package io.rebalance.cdc;

import io.rebalance.protocol.lease.LeaseLost;

/** This tail no longer holds the lease: another took over, so this one must stop writing at once. */
public final class TailLeaseLostException extends LeaseLost {
    public TailLeaseLostException(String holder, String message) {
        super(holder, message);
    }
}
