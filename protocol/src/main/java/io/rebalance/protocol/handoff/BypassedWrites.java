package io.rebalance.protocol.handoff;

import io.rebalance.protocol.LuaScript;
import io.rebalance.protocol.keyspace.HandoffKeys;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.params.ScanParams;

/**
 * Writes to the moved table that bypassed the Postgres fence ({@code <prefix>{cdc}:bypassed}): changes the held
 * forward tail passed over that the reverse stream did not make. Only a session that disabled the fence's trigger (or
 * forged the reverse stream's setting) makes one. Postgres took each, DynamoDB never got it: the tail records its key
 * and position, {@code status} shows them, {@code cutover --close-window} refuses while one differs between the
 * stores, and once the hold is lifted (a rollback) the tail writes them to DynamoDB and drops them.
 *
 * <p>Keys are kept up to {@link #CAP}; changes past it, and a TRUNCATE (which names no key), are only counted
 * ({@link Summary#overflow}), and their slots are marked changed like every change the tail passes over.
 */
public final class BypassedWrites {
    /** The most keys kept: about 10 MB of Redis at most. */
    public static final int CAP = 100_000;

    private static final LuaScript RECORD = LuaScript.load(BypassedWrites.class, "bypassed-record.lua");
    private static final LuaScript SETTLE = LuaScript.load(BypassedWrites.class, "bypassed-settle.lua");

    private final UnifiedJedis redis;
    private final HandoffKeys keys;

    public BypassedWrites(UnifiedJedis redis, HandoffKeys keys) {
        this.redis = redis;
        this.keys = keys;
    }

    /** What is recorded now: the keys kept (each with its change's position), and the changes counted past the cap. */
    public record Summary(Map<String, Long> keys, long overflow) {
        public boolean isEmpty() {
            return keys.isEmpty() && overflow == 0;
        }
    }

    /** Records each key with the WAL position of its change; a later change of a key replaces the position. */
    public void record(Map<String, Long> keyLsn) {
        if (keyLsn.isEmpty()) return;
        List<String> args = new ArrayList<>(keyLsn.size() * 2 + 1);
        args.add(Integer.toString(CAP));
        keyLsn.forEach((k, lsn) -> {
            args.add(k);
            args.add(Long.toString(lsn));
        });
        RECORD.eval(redis, List.of(keys.bypassed(), keys.bypassedOverflow()), args);
    }

    /** Counts changes that bypassed the fence whose keys cannot be kept (a TRUNCATE names none). */
    public void countUnkept(long changes) {
        if (changes > 0) redis.incrBy(keys.bypassedOverflow(), changes);
    }

    /** Whether anything is recorded, in one round trip. */
    public boolean any() {
        return redis.exists(keys.bypassed(), keys.bypassedOverflow()) > 0; // one hash tag: one slot on a Cluster
    }

    public Summary read() {
        Map<String, Long> kept = new LinkedHashMap<>();
        redis.hgetAll(keys.bypassed()).forEach((k, lsn) -> kept.put(k, Long.parseLong(lsn)));
        return new Summary(kept, overflow());
    }

    /** How many changes came past the cap, their keys not kept. */
    public long overflow() {
        String over = redis.get(keys.bypassedOverflow());
        return over == null ? 0 : Long.parseLong(over);
    }

    /** The number of keys kept. */
    public long kept() {
        return redis.hlen(keys.bypassed());
    }

    /**
     * Drops keys found reconciled, each only if it was not recorded again since it was read: {@code read} is what
     * {@link #read} returned for them.
     */
    public void settle(Map<String, Long> read) {
        if (read.isEmpty()) return;
        List<String> args = new ArrayList<>(read.size() * 2);
        read.forEach((k, lsn) -> {
            args.add(k);
            args.add(Long.toString(lsn));
        });
        SETTLE.eval(redis, List.of(keys.bypassed()), args);
    }

    /**
     * Forgets {@code changes} of those counted without their keys, once dealt with as the caller says; any counted
     * since they were read stay.
     */
    public void forgetUnkept(long changes) {
        if (changes > 0 && redis.decrBy(keys.bypassedOverflow(), changes) <= 0) redis.del(keys.bypassedOverflow());
    }

    /** What {@code status} shows: how many keys are kept and up to {@code named} of them, and the changes not kept. */
    public Summary summary(int named) {
        Map<String, Long> some = new LinkedHashMap<>();
        redis.hscan(keys.bypassed(), ScanParams.SCAN_POINTER_START, new ScanParams().count(named)).getResult().stream()
                .limit(named)
                .forEach(e -> some.put(e.getKey(), Long.parseLong(e.getValue())));
        return new Summary(some, overflow());
    }
}
