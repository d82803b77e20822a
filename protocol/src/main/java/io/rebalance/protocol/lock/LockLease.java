package io.rebalance.protocol.lock;

import io.rebalance.protocol.keyspace.ScopeKeys;
import io.rebalance.protocol.lease.Lease;

/**
 * One lease granted by {@link SharedExclusiveLock}: the project's one {@link Lease} type, shared or exclusive.
 *
 * @param member what Redis holds for it: {@code holder#token} for a shared lease, the owner for the exclusive one
 * @param token the fencing token: larger than every token granted before it in this scope. A store that remembers
 *     the smallest token it still accepts refuses a holder whose lease has expired since a newer one was granted.
 * @param expiresAtMs Redis server time at which it lapses unless renewed
 */
public record LockLease(ScopeKeys keys, Mode mode, String member, long token, long expiresAtMs) implements Lease {
    public enum Mode {
        SHARED,
        EXCLUSIVE
    }

    public LockLease withExpiry(long expiresAtMs) {
        return new LockLease(keys, mode, member, token, expiresAtMs);
    }
}
