package io.rebalance.verifier;

import java.time.Duration;

/**
 * Waits until changes that were in flight when a slot was fingerprinted have had their chance to land, so that a
 * difference they caused is not reported. The position is the source WAL position the fingerprint was taken at.
 * Until the change stream ({@code rebalance tail}) publishes the position it has applied, the wait is a fixed settle
 * time ({@code verify.settle}).
 */
@FunctionalInterface
public interface InFlight {
    void awaitPast(String walLsn) throws InterruptedException;

    static InFlight settle(Duration settle) {
        return lsn -> Thread.sleep(settle.toMillis());
    }
}
