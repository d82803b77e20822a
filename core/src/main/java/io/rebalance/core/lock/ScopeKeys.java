package io.rebalance.core.lock;

/**
 * The Redis keys of one scope (the moved table, as applications name it): its readers-writers lock and its routing
 * entry. All carry the scope as a hash tag, so the lock's scripts touch keys of one Redis Cluster slot.
 */
public record ScopeKeys(String prefix, String scope) {
    public ScopeKeys {
        if (scope == null || scope.isEmpty() || scope.contains("{") || scope.contains("}")) {
            throw new IllegalArgumentException("scope '" + scope
                    + "' is not usable: give a non-empty name without braces, such as the table name");
        }
    }

    private String tagged(String suffix) {
        return prefix + "{" + scope + "}:" + suffix;
    }

    /** Sorted set: shared holders, member {@code holder#token}, score the lease's expiry (Redis time, ms). */
    public String shared() {
        return tagged("lock:shared");
    }

    /** Hash with TTL: the exclusive holder's owner, token and since_ms. */
    public String exclusive() {
        return tagged("lock:exclusive");
    }

    /** Hash with TTL: the owner waiting for the exclusive lease; while it exists no new shared lease is granted. */
    public String pending() {
        return tagged("lock:pending");
    }

    /** Counter: the fencing tokens, one per lease granted, shared or exclusive, never reused. */
    public String token() {
        return tagged("lock:token");
    }

    /** Hash: the scope's routing entry (read and write target, status), see {@code io.rebalance.core.route}. */
    public String route() {
        return tagged("route");
    }

    /** Hash: the last cutover command's state (op, step, status, owner, token, times), see rebalance-cutover. */
    public String cutover() {
        return tagged("cutover");
    }

    /** Set: the keys applications wrote to DynamoDB under the TARGET epoch {@link #targetWritesLog} names. */
    public String targetWrites() {
        return tagged("target:writes");
    }

    /**
     * Hash: what the target-write log covers (epoch, target table, its key attribute, the Redis instance's run id)
     * and what makes it incomplete (overflow, gap), see {@code io.rebalance.core.handoff.TargetWriteLog}.
     */
    public String targetWritesLog() {
        return tagged("target:writes:log");
    }

    /** List: the cutover commands' steps as logged before each ran, newest last (the last 500 kept). */
    public String cutoverLog() {
        return tagged("cutover:log");
    }
}
