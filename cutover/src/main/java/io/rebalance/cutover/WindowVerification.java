package io.rebalance.cutover;

import java.time.Duration;

/**
 * The verification inside the blocked window: the slots changed since their last verification, compared while no
 * application writes and the forward tail has applied everything. Supplied by the caller (the cli runs the verifier).
 */
@FunctionalInterface
public interface WindowVerification {
    /** @param budget what is left of the write block; take no longer */
    Result verify(Duration budget) throws Exception;

    /** @param detail the slots verified, or the differences found */
    record Result(boolean match, String detail) {}
}
