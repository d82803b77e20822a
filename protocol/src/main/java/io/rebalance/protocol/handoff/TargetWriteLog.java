package io.rebalance.protocol.handoff;

import io.rebalance.protocol.LuaScript;
import io.rebalance.protocol.keyspace.ScopeKeys;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.params.ScanParams;
import redis.clients.jedis.resps.ScanResult;

/**
 * The keys applications write to DynamoDB while the route is TARGET, so that a rollback can prove Postgres holds
 * every one of them before Postgres reopens (ADR 9), instead of trusting that DynamoDB Streams delivered them in time.
 *
 * <p>The flip to TARGET starts the log for its epoch ({@link #begin}) before the route says TARGET anywhere. Every
 * guarded DynamoDB write adds its keys ({@link #add}) before it is sent, so a write that was acknowledged is in the
 * log, and one that is in the log but was never sent only costs a comparison. A rollback reads the log
 * ({@link #read}); it is complete only when it was begun for the route's epoch, in the Redis instance answering now
 * (a restart or failover changes the run id, and may have lost keys), never passed its cap, and no write found it
 * missing. An incomplete log makes a rollback compare every key instead.
 */
public final class TargetWriteLog {
    /** The most keys the log holds (about 100 MB of Redis at ULID keys); past it, rollback compares every key. */
    public static final long MAX_KEYS = 1_000_000;

    private static final LuaScript BEGIN = LuaScript.load(TargetWriteLog.class, "targetlog-begin.lua");
    private static final LuaScript ADD = LuaScript.load(TargetWriteLog.class, "targetlog-add.lua");
    private static final LuaScript STATE = LuaScript.load(TargetWriteLog.class, "targetlog-state.lua");
    private static final LuaScript RENUMBER = LuaScript.load(TargetWriteLog.class, "targetlog-renumber.lua");
    private static final LuaScript SETTLE = LuaScript.load(TargetWriteLog.class, "targetlog-settle.lua");
    private static final int SETTLE_PAGE = 1_000;
    private static final int PAGE = 10_000;

    private final UnifiedJedis redis;
    private final ScopeKeys keys;
    private final long maxKeys;
    private volatile Target cached;

    public TargetWriteLog(UnifiedJedis redis, ScopeKeys keys) {
        this(redis, keys, MAX_KEYS);
    }

    /** @param maxKeys the cap (tests set a small one) */
    public TargetWriteLog(UnifiedJedis redis, ScopeKeys keys, long maxKeys) {
        this.redis = redis;
        this.keys = keys;
        this.maxKeys = maxKeys;
    }

    /**
     * What a log covers: the writes of one TARGET epoch to one table, named by its key attributes ({@code
     * keyAttribute}: the partition key, or the partition key and the sort key joined by a comma).
     */
    public record Target(long epoch, String table, String keyAttribute) {
        /** The key attributes, partition key first: a key is logged as {@link io.rebalance.protocol.KeyText}. */
        public List<String> keyAttributes() {
            return List.of(keyAttribute.split(","));
        }
    }

    /** The log as a rollback finds it: complete with its keys, or incomplete and why. */
    public record Read(Optional<Set<String>> keys, String incomplete) {
        public boolean complete() {
            return keys.isPresent();
        }
    }

    /**
     * The name of the table a request names, by name or by ARN ({@code arn:aws:dynamodb:<region>:<account>:table/<name>},
     * which DynamoDB accepts wherever it takes a name): a write is logged by the table it reaches, whatever the
     * application called it. A same-named table of another account or region is logged too, which costs a comparison.
     */
    public static String tableName(String nameOrArn) {
        if (nameOrArn == null || !nameOrArn.startsWith("arn:")) return nameOrArn;
        int at = nameOrArn.indexOf(":table/");
        if (at < 0) return nameOrArn;
        String rest = nameOrArn.substring(at + ":table/".length());
        int slash = rest.indexOf('/'); // an index or stream ARN is no table's name
        return slash < 0 ? rest : nameOrArn;
    }

    /** The flip to TARGET, before the route says it anywhere: an empty log for {@code epoch}. */
    public void begin(long epoch, String table, String keyAttribute) {
        BEGIN.eval(
                redis,
                List.of(keys.targetWrites(), keys.targetWritesLog()),
                List.of(Long.toString(epoch), table, keyAttribute));
    }

    /**
     * A rollback starts a lost or incomplete log again (ADR 12): empty, and incomplete until {@link #settle} with the
     * same {@code token}, so a rollback that dies before it has compared every key leaves the next one to do it too.
     */
    public void restart(long epoch, String table, String keyAttribute, long token) {
        BEGIN.eval(
                redis,
                List.of(keys.targetWrites(), keys.targetWritesLog()),
                List.of(Long.toString(epoch), table, keyAttribute, Long.toString(token)));
    }

    /**
     * After the restarting rollback compared every key: the keys that differed join the log, and the log is complete
     * again.
     *
     * @return false, changing nothing, when another rollback started the log again since
     */
    public boolean settle(long token, Collection<String> differed) {
        List<String> all = new ArrayList<>(differed);
        int from = 0;
        do {
            int to = Math.min(all.size(), from + SETTLE_PAGE);
            List<String> args = new ArrayList<>(to - from + 2);
            args.add(Long.toString(token));
            args.add(to == all.size() ? "1" : "0");
            args.addAll(all.subList(from, to));
            Object r = SETTLE.eval(redis, List.of(keys.targetWrites(), keys.targetWritesLog()), args);
            if (!Long.valueOf(1).equals(r)) return false;
            from = to;
        } while (from < all.size());
        return true;
    }

    /**
     * What the log of {@code epoch} covers, read once per epoch by each process; empty when there is no log for it
     * (Redis lost it): the writes then mark it incomplete instead of adding keys.
     */
    public Optional<Target> target(long epoch) {
        Target t = cached;
        if (t != null && t.epoch() == epoch) return Optional.of(t);
        List<String> got = redis.hmget(keys.targetWritesLog(), "epoch", "table", "key");
        if (!Long.toString(epoch).equals(got.get(0)) || got.get(1) == null || got.get(2) == null) {
            return Optional.empty();
        }
        cached = new Target(epoch, got.get(1), got.get(2));
        return Optional.of(cached);
    }

    /** Before a write under {@code epoch} is sent: its keys (none when they are unknown: that marks a gap). */
    public void add(long epoch, Collection<String> written) {
        List<String> args = new ArrayList<>(written.size() + 2);
        args.add(Long.toString(epoch));
        args.add(Long.toString(maxKeys));
        args.addAll(written);
        ADD.eval(redis, List.of(keys.targetWrites(), keys.targetWritesLog()), args);
    }

    /** Marks the log of {@code epoch} incomplete: a write's keys could not be known. */
    public void gap(long epoch, String why) {
        redis.hset(keys.targetWritesLog(), "gap", "epoch " + epoch + ": " + why);
    }

    /** How many keys the log of {@code epoch} holds, and why it is incomplete (empty when it is not): for status. */
    public record Summary(long keys, String incomplete) {}

    public Summary summary(long epoch) {
        String why = incomplete(epoch);
        return new Summary(redis.scard(keys.targetWrites()), why == null ? "" : why);
    }

    /** The log of the TARGET route at {@code epoch}, as a rollback needs it. */
    public Read read(long epoch) {
        String why = incomplete(epoch);
        if (why != null) return new Read(Optional.empty(), why);
        Set<String> all = new LinkedHashSet<>();
        String cursor = ScanParams.SCAN_POINTER_START;
        do {
            ScanResult<String> page = redis.sscan(keys.targetWrites(), cursor, new ScanParams().count(PAGE));
            all.addAll(page.getResult());
            cursor = page.getCursor();
        } while (!ScanParams.SCAN_POINTER_START.equals(cursor));
        return new Read(Optional.of(all), "");
    }

    /** @return why the log of {@code epoch} is incomplete, or null when it is complete */
    @SuppressWarnings("unchecked")
    private String incomplete(long epoch) {
        List<Object> state = (List<Object>) STATE.eval(redis, List.of(keys.targetWritesLog()), List.of());
        String runId = (String) state.get(0);
        List<String> flat = (List<String>) state.get(1);
        Map<String, String> log = new HashMap<>();
        for (int i = 0; i + 1 < flat.size(); i += 2) log.put(flat.get(i), flat.get(i + 1));
        return incomplete(log, epoch, runId);
    }

    private String incomplete(Map<String, String> log, long epoch, String runId) {
        if (log.isEmpty()) return "Redis has no log of the keys written since the flip (it lost its data)";
        if (!Long.toString(epoch).equals(log.get("epoch"))) {
            return "the log is of epoch " + log.get("epoch") + ", not the route's " + epoch
                    + (log.containsKey("gap") ? " (" + log.get("gap") + ")" : "");
        }
        if (log.containsKey("gap")) return "a write found it missing (" + log.get("gap") + ")";
        if (log.containsKey("overflow")) return "it passed its cap of " + log.get("overflow") + " keys";
        if (log.containsKey("pending")) {
            return "a rollback started it again under token " + log.get("pending") + " and had not compared every key"
                    + " it stands on when it stopped";
        }
        if (!runId.equals(log.get("run_id"))) {
            return "the Redis instance that holds it restarted or failed over since the flip (run id "
                    + log.get("run_id") + ", now " + runId + "), so it may have lost keys";
        }
        return null;
    }

    /**
     * Recovery set the TARGET route's epoch from {@code from} to {@code to} (the fences recorded a newer one) under
     * the exclusive lease, with Redis' data intact: the log goes on under the new epoch. @return whether it did
     */
    public boolean renumber(long from, long to) {
        return Long.valueOf(1)
                .equals(RENUMBER.eval(
                        redis, List.of(keys.targetWritesLog()), List.of(Long.toString(from), Long.toString(to))));
    }

    /** Once the route left TARGET (rolled back, or the window closed): the log has no more use. */
    public void drop() {
        redis.del(keys.targetWrites(), keys.targetWritesLog());
        cached = null;
    }
}
