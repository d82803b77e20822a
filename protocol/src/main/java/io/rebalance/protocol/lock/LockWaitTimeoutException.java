package io.rebalance.protocol.lock;

import java.time.Duration;

/** A shared lease was not granted within the caller's bound because the cutover holds or wants the scope. */
public final class LockWaitTimeoutException extends RuntimeException {
    private final String scope;
    private final String owner;

    public LockWaitTimeoutException(String scope, String by, String owner, Duration waited) {
        super(
                "writes to '" + scope + "' are blocked: the exclusive lease is "
                        + ("pending".equals(by) ? "requested" : "held")
                        + " by " + owner + "; waited " + waited.toMillis()
                        + " ms, and nothing was written. A cutover or"
                        + " rollback blocks writes for up to its --max-write-block; retry the write, or see `rebalance status`");
        this.scope = scope;
        this.owner = owner;
    }

    public String scope() {
        return scope;
    }

    public String owner() {
        return owner;
    }
}
