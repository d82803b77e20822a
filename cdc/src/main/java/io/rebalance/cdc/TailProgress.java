package io.rebalance.cdc;

import io.rebalance.protocol.keyspace.TailKeys;
import java.time.Duration;
import java.util.OptionalLong;
import redis.clients.jedis.UnifiedJedis;

/**
 * The change stream's position as other commands see it, from what the active tail publishes every second: whether
 * a tail runs, and up to which WAL position every change is in DynamoDB. Verify waits on it for changes in flight;
 * cutover will wait on it for the position it noted.
 */
public final class TailProgress {
    private final UnifiedJedis redis;
    private final TailKeys keys;

    public TailProgress(UnifiedJedis redis, TailKeys keys) {
        this.redis = redis;
        this.keys = keys;
    }

    /** @return the applied position of a running tail (0 before its first batch), empty when none runs */
    public OptionalLong applied() {
        TailStatus.Report status = TailStatus.read(redis, keys);
        if (!status.running(System.currentTimeMillis())) return OptionalLong.empty();
        return OptionalLong.of(status.appliedLsn());
    }

    /**
     * Waits until a running tail has applied every change committed before {@code lsn}. Heartbeats move the position
     * on an idle table, so this holds within about one {@code tail.heartbeat} of the change stream catching up.
     *
     * @return true once it has; false when no tail runs or {@code timeout} passed first
     */
    public boolean awaitApplied(long lsn, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            OptionalLong applied = applied();
            if (applied.isEmpty()) return false;
            if (applied.getAsLong() >= lsn) return true;
            if (System.nanoTime() > deadline) return false;
            Thread.sleep(100); // polls what the tail publishes once a second
        }
    }
}
