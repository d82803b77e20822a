package io.rebalance.client;

import io.rebalance.protocol.shadow.ShadowOutcome;

/** Told each shadow read's outcome, on the shadow thread that compared it ({@link ShadowMeters} counts them). */
@FunctionalInterface
public interface ShadowListener {
    ShadowListener NONE = (scope, outcome) -> {};

    /** @param scope the scope read: the table's, or its part's ({@code table/part}) */
    void outcome(String scope, ShadowOutcome outcome);
}
