package io.rebalance.mover.redis;

import io.rebalance.core.records.Records;
import io.rebalance.core.records.RedisRecords;
import io.rebalance.core.redis.SampleLog;
import io.rebalance.core.retry.Retrier;
import io.rebalance.mover.Coordinator;
import io.rebalance.mover.RateWindows;
import io.rebalance.mover.RunState;
import io.rebalance.mover.SlotStore;
import io.rebalance.mover.WriteUnitBudget;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.keyspace.RunKeys;
import io.rebalance.protocol.lease.LeaseStore;
import io.rebalance.protocol.lease.RedisLeaseStore;
import java.time.Duration;
import redis.clients.jedis.UnifiedJedis;

/** The copy coordinated through Redis ({@link Coordinator}): a key or script per part, under the run's prefix. */
public final class RedisCoordinator implements Coordinator {
    private final UnifiedJedis redis;
    private final RunKeys keys;
    private final String refusedKey;
    private final String verifiedKey;
    private final RedisRunState run;
    private final RedisSlotStore slots;
    private final SampleLog history;

    public RedisCoordinator(
            Keyspace keyspace, UnifiedJedis redis, Retrier retrier, Duration leaseTtl, Duration stateTtl) {
        this.redis = redis;
        this.keys = keyspace.run();
        this.refusedKey = keyspace.refused();
        this.verifiedKey = keyspace.verified();
        this.run = new RedisRunState(redis, keys, retrier);
        this.slots = new RedisSlotStore(redis, keys, retrier, leaseTtl, stateTtl);
        this.history = new SampleLog(redis, keys.history());
    }

    @Override
    public String kind() {
        return "redis";
    }

    @Override
    public String where() {
        return String.format("Redis prefix '%s'", keys.prefix());
    }

    @Override
    public RunState run() {
        return run;
    }

    @Override
    public SlotStore slots() {
        return slots;
    }

    @Override
    public LeaseStore leases() {
        return new RedisLeaseStore(redis);
    }

    @Override
    public String keeperLease() {
        return keys.keeper();
    }

    @Override
    public RateWindows rateWindows() {
        return new RedisRateWindows(redis, keys);
    }

    @Override
    public WriteUnitBudget budget() {
        return new RedisWriteUnitBudget(redis, keys);
    }

    @Override
    public void sampleProgress(long nowMs, long rows, long rowsPerSecond) {
        history.append(nowMs, rows, rowsPerSecond);
    }

    @Override
    public Records refused() {
        return new RedisRecords(redis, refusedKey);
    }

    @Override
    public Records verified() {
        return new RedisRecords(redis, verifiedKey);
    }
}
