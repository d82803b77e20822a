package io.rebalance.cutover;

import java.time.Duration;
import java.util.Collection;
import java.util.Optional;

/**
 * How a rollback knows Postgres holds every write applications made to DynamoDB under TARGET before it reopens
 * Postgres (ADR 9): the keys they wrote, compared row by row with their items while DynamoDB takes no writes.
 * Supplied by the caller (ops runs the verifier). One serves one rollback's window, where DynamoDB takes no writes:
 * it may read a key's item once and compare only the key's row again.
 */
public interface DrainProof {
    /**
     * @param keys the keys to compare, only while DynamoDB takes no writes; empty for every key either store holds
     *     (the log of written keys is incomplete), which reads both stores every time
     * @param budget what is left of the write block; take no longer
     * @return the keys whose row and item differ; a key whose row Postgres lacks or still has counts
     * @throws java.util.concurrent.TimeoutException when the budget ran out first
     */
    Collection<String> differing(Optional<Collection<String>> keys, Duration budget) throws Exception;

    /**
     * Starts reading the items of these keys, ahead of their rows, which {@link #differing} then compares: called
     * once DynamoDB takes no writes, so the items are final, while Postgres may still take the reverse stream's last
     * batches. Reading nothing ahead is correct too (differing reads what it lacks), only slower.
     */
    default void readItems(Collection<String> keys) throws Exception {}

    /**
     * Whether it may compare every key when the log is incomplete ({@code --verify-all}): that blocks writes for as
     * long as reading both stores whole takes.
     */
    boolean comparesEveryKey();
}
