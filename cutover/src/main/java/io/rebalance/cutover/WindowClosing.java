package io.rebalance.cutover;

import java.util.Optional;

/**
 * What {@code --close-window} needs of the stores before it ends the window, supplied by the caller (ops reads the
 * tail's progress and runs the verifier): every write that bypassed the Postgres fence recorded, and a comparison of
 * the recorded keys' rows and items.
 */
public interface WindowClosing {
    /**
     * Waits until the forward tail has read the WAL up to a position taken now, so that a write which bypassed the
     * fence before the command is recorded by then.
     *
     * @return empty once it has; otherwise why not (no tail runs, or it is behind), which the command refuses with
     */
    Optional<String> awaitTail() throws Exception;

    /** The comparison of the recorded keys, made only when there are some; closed after, if {@link AutoCloseable}. */
    DrainProof proof() throws Exception;
}
