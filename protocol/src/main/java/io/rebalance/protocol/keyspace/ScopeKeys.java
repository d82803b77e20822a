package io.rebalance.protocol.keyspace;

import java.util.Set;

/**
 * The keys of one scope (the moved table, as applications name it): its readers-writers lock, its routing entry, the
 * cutover's journal, the target-write log and its shadow reads' record. All carry the scope as hash tag, so the lock's and the route's scripts
 * touch keys of one Redis Cluster slot. Reset group: {@link ResetGroup#ROUTE}.
 */
public final class ScopeKeys {
    private static final Set<String> NAMES = Set.of(
            "lock:shared",
            "lock:exclusive",
            "lock:pending",
            "lock:token",
            "route",
            "cutover",
            "cutover:log",
            "target:writes",
            "target:writes:log",
            "replica:probe",
            "shadow:counts",
            "shadow:mismatches");

    private final String prefix;
    private final String scope;

    ScopeKeys(String prefix, String scope) {
        if (scope == null || scope.isEmpty() || scope.contains("{") || scope.contains("}")) {
            throw new IllegalArgumentException("scope '" + scope
                    + "' is not usable: give a non-empty name without braces, such as the table name");
        }
        this.prefix = prefix;
        this.scope = scope;
    }

    public String scope() {
        return scope;
    }

    private String tagged(String name) {
        return prefix + "{" + scope + "}:" + name;
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

    /**
     * String: the time of the last write the cutover's Redis check made to learn whether a replica acknowledges
     * writes to this scope's node ({@code WAIT}); in the route's slot, so on the node that holds the route.
     */
    public String replicaProbe() {
        return tagged("replica:probe");
    }

    /** Hash: the scope's routing entry (read and write target, status), see {@code io.rebalance.protocol.route}. */
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
     * and what makes it incomplete (overflow, gap), see {@code io.rebalance.protocol.handoff.TargetWriteLog}.
     */
    public String targetWritesLog() {
        return tagged("target:writes:log");
    }

    /**
     * Hash: the scope's shadow reads counted by outcome, per minute ({@code <minute>:<outcome>}, a day kept) and in
     * all ({@code total:<outcome>}), see {@code io.rebalance.protocol.shadow.ShadowLog}.
     */
    public String shadowCounts() {
        return tagged("shadow:counts");
    }

    /** List: the scope's latest shadow-read mismatches, newest first (the last 1,000 kept). */
    public String shadowMismatches() {
        return tagged("shadow:mismatches");
    }

    /** List: the cutover commands' steps as logged before each ran, newest last (the last 500 kept). */
    public String cutoverLog() {
        return tagged("cutover:log");
    }

    static boolean owns(String name) {
        String rest = Keyspace.afterAnyTag(name);
        return rest != null && NAMES.contains(rest);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ScopeKeys k && k.prefix.equals(prefix) && k.scope.equals(scope);
    }

    @Override
    public int hashCode() {
        return prefix.hashCode() * 31 + scope.hashCode();
    }
}
