package io.rebalance.protocol.fence;

/**
 * A store refused a write: the writer's lease lapsed and the scope has moved on since (ADR 7). Nothing of the write
 * was applied. The writer must not retry blindly with the same permit; a new guarded write re-reads the route.
 */
public final class FencedException extends RuntimeException {
    public FencedException(String store, String scope, long token, String state) {
        super(store + " refused a write to '" + scope + "' with fencing token " + token + " (fence: " + state
                + "): the writer's lease lapsed and the route may have changed since; nothing was written. Start a"
                + " new guarded write, which takes a new lease and reads the route again");
    }
}
