package io.rebalance.protocol.lock;

import io.rebalance.protocol.keyspace.ScopeKeys;

/**
 * One lease granted by {@link SharedExclusiveLock}.
 *
 * @param member what Redis holds for it: {@code holder#token} for a shared lease, the owner for the exclusive one
 * @param token the fencing token: larger than every token granted before it in this scope. A store that remembers
 *     the smallest token it still accepts refuses a holder whose lease has expired since a newer one was granted.
 * @param expiresAtMs Redis server time at which it lapses unless renewed
 */
public record Lease(ScopeKeys keys, Mode mode, String member, long token, long expiresAtMs) {
    public enum Mode {
        SHARED,
        EXCLUSIVE
    }

    public Lease withExpiry(long expiresAtMs) {
        return new Lease(keys, mode, member, token, expiresAtMs);
    }
}
