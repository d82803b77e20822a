package io.rebalance.cutover;

import java.time.Duration;

/**
 * How the cutover knows DynamoDB holds what Postgres holds when it flips. Supplied by the caller (ops runs the
 * verifier). Most of the work comes {@link #before} the window, while writes go on; {@link #verify} in the window
 * then compares only what changed since, while no application writes and the forward tail has applied everything.
 */
@FunctionalInterface
public interface WindowVerification extends AutoCloseable {
    /**
     * Before the exclusive lease, while writes go on: whatever can be verified without blocking them, and the
     * arrangements for {@link #verify} to find what changed after it. A result that does not match aborts the cutover
     * before any write was blocked.
     */
    default Result before() throws Exception {
        return new Result(true, "nothing verified before the window");
    }

    /** In the window. @param budget what is left of the write block; take no longer */
    Result verify(Duration budget) throws Exception;

    /** After the cutover, done or aborted: undo the arrangements of {@link #before}. */
    @Override
    default void close() throws Exception {}

    /** @param detail the slots or keys verified, or the differences found */
    record Result(boolean match, String detail) {}
}
