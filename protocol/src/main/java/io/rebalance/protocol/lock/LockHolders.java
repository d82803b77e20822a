package io.rebalance.protocol.lock;

import java.util.List;

/**
 * A snapshot of one scope's lock for {@code rebalance status}.
 *
 * @param exclusive the exclusive holder, or null
 * @param pending the owner waiting for the exclusive lease (new writes wait), or null
 * @param shared live shared holders, soonest to lapse first
 */
public record LockHolders(Exclusive exclusive, Exclusive pending, List<Shared> shared) {
    /** @param token 0 for a pending request */
    public record Exclusive(String owner, long token, long remainingMs, long heldMs) {}

    public record Shared(String member, long remainingMs) {}
}
