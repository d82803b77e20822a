package io.rebalance.protocol.lock;

import io.rebalance.protocol.LuaScript;
import io.rebalance.protocol.keyspace.ScopeKeys;
import io.rebalance.protocol.lease.LeaseLost;
import io.rebalance.protocol.lease.LeaseReply;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.LongConsumer;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.resps.Tuple;

/**
 * A readers-writers lock in Redis for one scope, with leases: any number of shared holders (application writes to the
 * moved table) or one exclusive holder (the cutover), never both.
 *
 * <ul>
 *   <li><b>Leases, not locks.</b> Every lease has a TTL in Redis time and lapses unless renewed, so a holder that dies
 *       blocks nobody for longer than its TTL. A holder whose lease lapsed has lost it for good: renewing fails.
 *   <li><b>Writer-preferring.</b> The exclusive request is marked pending at once; from then on new shared leases are
 *       refused (callers wait, bounded), and the exclusive lease is granted when the last shared holder releases or
 *       expires. A steady stream of writers cannot starve the cutover, and the cutover waits at most one shared TTL.
 *   <li><b>Fencing tokens.</b> Each lease gets a number from one counter per scope. A lapsed holder may still be
 *       running (a GC pause, a stalled socket); the stores it writes to refuse it by token (see {@code
 *       io.rebalance.protocol.fence}), since no check made before a pause can stop a write made after it.
 *   <li>Every step is one Lua script (ADR 2), called by SHA, on keys sharing one hash tag.
 * </ul>
 *
 * <p>Thread-safe; holds no state of its own besides the Redis client.
 */
public final class SharedExclusiveLock {
    private static final LuaScript SHARED_ACQUIRE = LuaScript.load(SharedExclusiveLock.class, "shared-acquire.lua");
    private static final LuaScript SHARED_RENEW = LuaScript.load(SharedExclusiveLock.class, "shared-renew.lua");
    private static final LuaScript EXCLUSIVE_ACQUIRE =
            LuaScript.load(SharedExclusiveLock.class, "exclusive-acquire.lua");
    private static final LuaScript EXCLUSIVE_RENEW = LuaScript.load(SharedExclusiveLock.class, "exclusive-renew.lua");
    private static final LuaScript EXCLUSIVE_RELEASE =
            LuaScript.load(SharedExclusiveLock.class, "exclusive-release.lua");
    private static final LuaScript NOW = LuaScript.load(SharedExclusiveLock.class, "now.lua");
    private static final LuaScript TOKEN_SEED = LuaScript.load(SharedExclusiveLock.class, "token-seed.lua");
    /** Waits poll Redis no more often than this; the longest extra delay a waiter sees once the way is clear. */
    private static final long MAX_POLL_MS = 5;

    private final UnifiedJedis redis;
    private final ScopeKeys keys;

    public SharedExclusiveLock(UnifiedJedis redis, ScopeKeys keys) {
        this.redis = redis;
        this.keys = keys;
    }

    public ScopeKeys keys() {
        return keys;
    }

    /** The answer to one attempt: granted, refused because of another holder, or pending (exclusive only). */
    public sealed interface Attempt {}

    public record Granted(LockLease lease) implements Attempt {}

    /** @param by {@code exclusive} (held) or {@code pending} (requested) */
    public record Refused(String by, String owner, long remainingMs) implements Attempt {}

    /** The exclusive request is registered; {@code sharedHolders} still hold, the last for up to the time given. */
    public record Pending(long sharedHolders, long longestRemainingMs) implements Attempt {}

    public Attempt tryShared(String holder, Duration ttl) {
        LeaseReply r = LeaseReply.of(SHARED_ACQUIRE.eval(redis, lockKeys(), List.of(holder, ms(ttl))));
        if (r.granted()) {
            return new Granted(new LockLease(keys, LockLease.Mode.SHARED, r.member(), r.token(), r.detailNumber()));
        }
        return new Refused(r.detailText(), r.owner(), r.remainingMs());
    }

    /**
     * Takes a shared lease, waiting while an exclusive lease is held or requested.
     *
     * @throws LockWaitTimeoutException naming the exclusive holder when {@code maxWait} passes first
     */
    public LockLease acquireShared(String holder, Duration ttl, Duration maxWait) throws InterruptedException {
        return acquireShared(holder, ttl, maxWait, waited -> {});
    }

    /**
     * As {@link #acquireShared(String, Duration, Duration)}, telling {@code blocked} how long it waited (ns) when a
     * cutover's exclusive lease refused it at least once, granted in the end or not.
     */
    public LockLease acquireShared(String holder, Duration ttl, Duration maxWait, LongConsumer blocked)
            throws InterruptedException {
        long start = System.nanoTime();
        long pause = 1;
        boolean refused = false;
        while (true) {
            Attempt a = tryShared(holder, ttl);
            if (a instanceof Granted g) {
                if (refused) blocked.accept(System.nanoTime() - start);
                return g.lease();
            }
            Refused r = (Refused) a;
            refused = true;
            long waited = System.nanoTime() - start;
            if (waited >= maxWait.toNanos()) {
                blocked.accept(waited);
                throw new LockWaitTimeoutException(keys.scope(), r.by(), r.owner(), Duration.ofNanos(waited));
            }
            Thread.sleep(pause); // polls the lock: the exclusive holder releases it within --max-write-block
            pause = Math.min(MAX_POLL_MS, pause * 2);
        }
    }

    /**
     * @return the lease with its new expiry
     * @throws LeaseLost when it has lapsed or was taken away; its holder must not write
     */
    public LockLease renew(LockLease lease, Duration ttl) {
        if (lease.mode() == LockLease.Mode.SHARED) {
            LeaseReply r =
                    LeaseReply.of(SHARED_RENEW.eval(redis, List.of(keys.shared()), List.of(lease.member(), ms(ttl))));
            if (!r.granted()) throw lost(lease, r);
            return lease.withExpiry(r.detailNumber());
        }
        LeaseReply r = LeaseReply.of(EXCLUSIVE_RENEW.eval(
                redis, List.of(keys.exclusive()), List.of(lease.member(), Long.toString(lease.token()), ms(ttl))));
        if (!r.granted()) throw lost(lease, r);
        return lease.withExpiry(System.currentTimeMillis() + ttl.toMillis());
    }

    private static LeaseLost lost(LockLease lease, LeaseReply r) {
        return new LeaseLost(
                r.member(),
                "the " + lease.mode().name().toLowerCase(Locale.ROOT) + " lease " + lease.member()
                        + " (token " + lease.token() + ") on scope '"
                        + lease.keys().scope() + "' is lost: "
                        + (r.member().isEmpty() ? "it lapsed before this renewal" : "it is now held by " + r.member()));
    }

    /** Gives the lease back; a lapsed or foreign lease is left alone. */
    public void release(LockLease lease) {
        if (lease.mode() == LockLease.Mode.SHARED) {
            redis.zrem(keys.shared(), lease.member());
        } else {
            EXCLUSIVE_RELEASE.eval(
                    redis,
                    List.of(keys.exclusive(), keys.pending()),
                    List.of(lease.member(), Long.toString(lease.token())));
        }
    }

    /** Registers (or keeps alive) this owner's exclusive request, and takes the lease if no shared holder is left. */
    public Attempt tryExclusive(String owner, Duration ttl) {
        LeaseReply r = LeaseReply.of(EXCLUSIVE_ACQUIRE.eval(redis, lockKeys(), List.of(owner, ms(ttl))));
        if (r.granted())
            return new Granted(new LockLease(keys, LockLease.Mode.EXCLUSIVE, owner, r.token(), r.detailNumber()));
        if (r.pending()) return new Pending(r.detailNumber(), r.remainingMs());
        return new Refused(r.detailText(), r.owner(), r.remainingMs());
    }

    /** Withdraws this owner's pending request (new shared leases are granted again); its held lease is kept. */
    public void withdraw(String owner) {
        EXCLUSIVE_RELEASE.eval(redis, List.of(keys.exclusive(), keys.pending()), List.of(owner, ""));
    }

    /** Who holds or waits, as Redis sees it now. */
    public LockHolders holders() {
        long now = redisNowMs();
        Map<String, String> ex = redis.hgetAll(keys.exclusive());
        Map<String, String> pending = redis.hgetAll(keys.pending());
        List<LockHolders.Shared> shared = new ArrayList<>();
        for (Tuple t : redis.zrangeByScoreWithScores(keys.shared(), now, Double.POSITIVE_INFINITY)) {
            shared.add(new LockHolders.Shared(t.getElement(), (long) t.getScore() - now));
        }
        LockHolders.Exclusive exclusive = ex.isEmpty()
                ? null
                : new LockHolders.Exclusive(
                        ex.get("owner"),
                        Long.parseLong(ex.get("token")),
                        redis.pttl(keys.exclusive()),
                        now - Long.parseLong(ex.get("since_ms")));
        LockHolders.Exclusive waiting = pending.isEmpty()
                ? null
                : new LockHolders.Exclusive(
                        pending.get("owner"),
                        0,
                        redis.pttl(keys.pending()),
                        now - Long.parseLong(pending.get("since_ms")));
        return new LockHolders(exclusive, waiting, shared);
    }

    /**
     * Raises the token counter to at least {@code floor}, never lowers it: after Redis lost its data, the counter
     * starts again from the fences' high-water mark, so no new lease gets a token a fence already refuses (ADR 8).
     *
     * @return the counter after
     */
    public long seedTokens(long floor) {
        return num(TOKEN_SEED.eval(redis, List.of(keys.token()), List.of(Long.toString(floor))));
    }

    private long redisNowMs() {
        // the key only routes the call: on a cluster, the clock of the node whose expiries it is compared with
        return num(NOW.eval(redis, List.of(keys.shared()), List.of()));
    }

    private List<String> lockKeys() {
        return List.of(keys.shared(), keys.exclusive(), keys.pending(), keys.token());
    }

    private static String ms(Duration d) {
        return Long.toString(Math.max(1, d.toMillis()));
    }

    private static long num(Object o) {
        return ((Long) o).longValue();
    }
}
