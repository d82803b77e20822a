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
        return awaitCatchUp(lsn, timeout, timeout).reached(); // standing still for the whole timeout is the timeout
    }

    /**
     * Waits until a running tail has applied every change committed before {@code lsn}, for as long as it keeps
     * moving: a tail working through a backlog is given the time it needs, up to {@code limit}, while one whose applied
     * position stands still for {@code stall} (stuck, or slower than the writes it must follow) is given up on.
     *
     * @return how the wait ended
     */
    public CatchUp awaitCatchUp(long lsn, Duration stall, Duration limit) throws InterruptedException {
        long start = System.nanoTime();
        long movedAt = start;
        long last = -1;
        while (true) {
            OptionalLong applied = applied();
            if (applied.isEmpty()) return new CatchUp(false, last, "no tail is running");
            long now = System.nanoTime();
            long at = applied.getAsLong();
            if (at >= lsn) return new CatchUp(true, at, "");
            if (at != last) {
                last = at;
                movedAt = now;
            }
            if (now - movedAt > stall.toNanos()) {
                return new CatchUp(false, at, "its applied position stood still for " + stall.toSeconds() + " s");
            }
            if (now - start > limit.toNanos()) {
                return new CatchUp(false, at, "it was still catching up after " + limit.toSeconds() + " s");
            }
            Thread.sleep(100); // a poll: the tail publishes to Redis once a second, and no notice reaches this process
        }
    }

    /**
     * @param reached whether the tail applied the position waited for
     * @param applied the tail's applied position when the wait ended (-1 when none was read)
     * @param why why it was given up on; empty when reached
     */
    public record CatchUp(boolean reached, long applied, String why) {}
}
