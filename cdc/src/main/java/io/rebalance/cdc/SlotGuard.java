package io.rebalance.cdc;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.keyspace.TailKeys;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import redis.clients.jedis.UnifiedJedis;

/**
 * The replication slot's health as the tail meets it before each stream and each restart: lost or gone under saved
 * positions (stop once, with the way forward), still read by a tail that just died (wait for it), and Debezium's word
 * that the saved position is gone.
 */
final class SlotGuard {
    private final MigrationConfig config;
    private final UnifiedJedis redis;
    private final TailKeys keys;
    private final Duration leaseTtl;

    SlotGuard(MigrationConfig config, UnifiedJedis redis, TailKeys keys, Duration leaseTtl) {
        this.config = config;
        this.redis = redis;
        this.keys = keys;
        this.leaseTtl = leaseTtl;
    }

    /**
     * A slot Postgres invalidated, or one that is gone while the tail has saved positions in it (dropped under the
     * tail), has lost changes the stream can never deliver: stop once, with the way forward, rather than restart in a
     * loop or let Debezium create a new slot that starts after the gap.
     */
    void refuseLost(Connection c) throws SQLException {
        String name = config.tail().slotName();
        TailPreflight.SlotInfo slot = TailPreflight.slot(c, name);
        String startOver = " Start over: `rebalance tail --drop-slot`, `rebalance reset`, then `rebalance tail` and"
                + " `rebalance copy` again (or `rebalance verify --all --repair` to rewrite what the stream missed,"
                + " once a new tail runs).";
        if (slot.lost()) {
            throw new RebalanceException(
                    ErrorCode.TAIL_SLOT_LOST,
                    "replication slot '" + name + "' was invalidated by Postgres (wal_status lost): it fell more than"
                            + " max_slot_wal_keep_size behind and the WAL it needed was removed, so changes since are"
                            + " gone from the stream." + startOver
                            + " Raise max_slot_wal_keep_size, or watch safe_wal_bytes in `rebalance status`, so it does"
                            + " not happen again.");
        }
        if (!slot.exists() && offsetsSaved()) {
            throw new RebalanceException(
                    ErrorCode.TAIL_OFFSETS_GONE,
                    "replication slot '" + name + "' is gone while the tail has saved positions in it ("
                            + keys.offsets() + "): it was dropped under the tail, so changes since are gone from the"
                            + " stream." + startOver);
        }
    }

    /** Whether the tail saved positions; false while Redis is away (the check runs again before the next restart). */
    private boolean offsetsSaved() {
        try {
            return redis.exists(keys.offsets());
        } catch (RuntimeException redisAway) {
            return false;
        }
    }

    /** Restarting cannot help when Debezium says the position it must resume from is gone from the slot. */
    static boolean offsetsGone(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t.getMessage() != null && t.getMessage().contains("no longer available on the server")) return true;
        }
        return false;
    }

    /** A slot still read by a tail that just died frees itself within moments; one read by anything else is refused. */
    void awaitFree(Connection c, CountDownLatch stopped) throws Exception {
        long deadline = System.nanoTime() + leaseTtl.toNanos();
        while (true) {
            try {
                TailPreflight.slotUsable(c, config.tail().slotName());
                return;
            } catch (RebalanceException e) {
                if (!TailPreflight.slot(c, config.tail().slotName()).active() || System.nanoTime() > deadline) throw e;
                if (stopped.await(200, TimeUnit.MILLISECONDS)) return; // the old reader's connection is closing
            }
        }
    }
}
