package io.rebalance.cutover;

import io.rebalance.protocol.keyspace.ScopeKeys;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.UnifiedJedis;

/**
 * Where a cutover command writes down what it is about to do, before doing it: one hash per scope with the current
 * command's state, and a log of every step. A command that dies leaves {@code status=running} behind with the step it
 * had reached; the next command, and {@code rebalance status}, read it from here.
 */
public final class CutoverJournal {
    private static final Logger log = LoggerFactory.getLogger(CutoverJournal.class);
    private static final int KEPT = 500;

    private final UnifiedJedis redis;
    private final ScopeKeys keys;

    public CutoverJournal(UnifiedJedis redis, ScopeKeys keys) {
        this.redis = redis;
        this.keys = keys;
    }

    /** What the hash holds. {@code step} is the last step begun; {@code status} is running, done or aborted. */
    public record Entry(
            String op,
            String step,
            String status,
            String owner,
            long token,
            long startedMs,
            long updatedMs,
            long blockedMs,
            String reason) {
        public boolean running() {
            return "running".equals(status);
        }
    }

    public Optional<Entry> read() {
        Map<String, String> h = redis.hgetAll(keys.cutover());
        if (h.isEmpty()) return Optional.empty();
        return Optional.of(new Entry(
                h.getOrDefault("op", ""),
                h.getOrDefault("step", ""),
                h.getOrDefault("status", ""),
                h.getOrDefault("owner", ""),
                Long.parseLong(h.getOrDefault("token", "0")),
                Long.parseLong(h.getOrDefault("started_ms", "0")),
                Long.parseLong(h.getOrDefault("updated_ms", "0")),
                Long.parseLong(h.getOrDefault("blocked_ms", "0")),
                h.getOrDefault("reason", "")));
    }

    /** The last {@code n} log lines, oldest first. */
    public List<String> tail(int n) {
        return redis.lrange(keys.cutoverLog(), -n, -1);
    }

    void begin(String op, String owner) {
        long now = System.currentTimeMillis();
        Map<String, String> f = new LinkedHashMap<>();
        f.put("op", op);
        f.put("step", "");
        f.put("status", "running");
        f.put("owner", owner);
        f.put("token", "0");
        f.put("started_ms", Long.toString(now));
        f.put("updated_ms", Long.toString(now));
        f.put("blocked_ms", "0");
        f.put("reason", "");
        redis.hset(keys.cutover(), f);
        append(op + " begun by " + owner);
    }

    /** Logs and persists {@code step} as begun: called before the step does anything. */
    void step(String op, CutoverStep step, String detail) {
        log.info(
                "{} {} step {}: {}{}",
                keys.scope(),
                op,
                step,
                step.what(),
                detail.isEmpty() ? "" : " (" + detail + ")");
        redis.hset(
                keys.cutover(), Map.of("step", step.name(), "updated_ms", Long.toString(System.currentTimeMillis())));
        append(op + " " + step + (detail.isEmpty() ? "" : " " + detail));
    }

    /** Logs and keeps a step's outcome worth reading later (what was verified). */
    void note(String op, String text) {
        log.info("{} {}: {}", keys.scope(), op, text);
        append(op + " " + text);
    }

    /** One field of the journal as the command set it ({@code marker_lsn}, say); null when unset. */
    String field(String name) {
        return redis.hget(keys.cutover(), name);
    }

    void set(String field, String value) {
        redis.hset(keys.cutover(), field, value);
    }

    void end(String op, String status, String reason, long blockedMs) {
        redis.hset(
                keys.cutover(),
                Map.of(
                        "status",
                        status,
                        "reason",
                        reason,
                        "blocked_ms",
                        Long.toString(blockedMs),
                        "updated_ms",
                        Long.toString(System.currentTimeMillis())));
        append(op + " " + status + (reason.isEmpty() ? "" : ": " + reason));
        log.info("{} {} {}{}", keys.scope(), op, status, reason.isEmpty() ? "" : ": " + reason);
    }

    private void append(String line) {
        redis.rpush(keys.cutoverLog(), System.currentTimeMillis() + " " + line);
        redis.ltrim(keys.cutoverLog(), -KEPT, -1);
    }
}
