package io.rebalance.protocol.handoff;

import io.rebalance.protocol.LuaScript;
import io.rebalance.protocol.keyspace.HandoffKeys;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.params.SetParams;

/**
 * The keys the forward tail writes to DynamoDB while a cutover wants them (ADR 7), so the cutover's blocked window
 * compares only those keys, row by row, instead of whole slots: the slots are verified before the window, while
 * writes go on, and every key written from then on is in the log.
 *
 * <p>The log has generations. The tail, inside its apply lock and before it writes, adds the keys to the current
 * generation's set and notes that generation as seen ({@link #record}). When the cutover starts a new generation and
 * then sees it noted (or the tail applied past a WAL position taken after the switch), every apply that logged under
 * the old one has finished writing: the tail notes a generation only once no write it logged under another is still
 * landing ({@link #recordUnder}). The old generation's set is then complete.
 *
 * <p>Everything expires ({@code ttl}, renewed by the cutover while it runs), so a cutover that dies leaves the tail
 * logging for at most that long.
 */
public final class KeyLog {
    private static final LuaScript RECORD = LuaScript.load(KeyLog.class, "keylog-record.lua");
    /** Keys per script call: a batch of the tail is at most a few thousand keys, this keeps each call short. */
    private static final int CHUNK = 1000;

    private final UnifiedJedis redis;
    private final HandoffKeys keys;

    public KeyLog(UnifiedJedis redis, HandoffKeys keys) {
        this.redis = redis;
        this.keys = keys;
    }

    /** Starts a generation: the tail logs every key it writes from its next apply on. @return the generation */
    public String start(Duration ttl) {
        String gen = UUID.randomUUID().toString().substring(0, 8);
        redis.del(keys.keyLogKeys(gen));
        redis.set(keys.keyLog(), gen, SetParams.setParams().px(ttl.toMillis()));
        return gen;
    }

    /** The generation the tail logs under now, if any. */
    public Optional<String> current() {
        return Optional.ofNullable(redis.get(keys.keyLog()));
    }

    /** The generations several logs (a table's parts) log under now, in one round trip; empty where none logs. */
    public static List<Optional<String>> currents(UnifiedJedis redis, List<HandoffKeys> logs) {
        List<String> gens = redis.mget(logs.stream().map(HandoffKeys::keyLog).toArray(String[]::new));
        return gens.stream().map(Optional::ofNullable).toList();
    }

    /**
     * Waits until no apply that logged under an older generation than {@code gen} can still be writing: the tail has
     * logged under {@code gen}, or {@code appliedPast} says it applied past a position taken after {@code gen}
     * started (a tail with nothing to write logs nothing).
     *
     * @return false when {@code timeout} passed first
     */
    public boolean awaitSeen(String gen, Duration timeout, BooleanSupplier appliedPast) throws InterruptedException {
        return Answer.await(() -> gen.equals(redis.get(keys.keyLogSeen())) || appliedPast.getAsBoolean(), timeout);
    }

    /** The keys written under {@code gen}. */
    public Set<String> keys(String gen) {
        return redis.smembers(keys.keyLogKeys(gen));
    }

    /** Adds keys to {@code gen} by hand: keys the cutover wants compared again later. */
    public void add(String gen, Collection<String> written) {
        if (written.isEmpty()) return;
        redis.sadd(keys.keyLogKeys(gen), written.toArray(String[]::new));
        Long ttl = redis.pttl(keys.keyLog());
        if (ttl != null && ttl > 0) redis.pexpire(keys.keyLogKeys(gen), ttl);
    }

    /** Keeps the log and {@code generations}' sets alive for another {@code ttl}. @return false if the log lapsed */
    public boolean renew(Duration ttl, Collection<String> generations) {
        boolean alive = redis.pexpire(keys.keyLog(), ttl.toMillis()) == 1;
        for (String gen : generations) redis.pexpire(keys.keyLogKeys(gen), ttl.toMillis());
        return alive;
    }

    /** Drops a generation's set. */
    public void drop(String gen) {
        redis.del(keys.keyLogKeys(gen));
    }

    /** Stops the log, if {@code gen} is still its generation, and drops the set. */
    public void stop(String gen) {
        if (gen.equals(redis.get(keys.keyLog()))) redis.del(keys.keyLog());
        redis.del(keys.keyLogKeys(gen), keys.keyLogSeen());
    }

    /**
     * The tail's side, inside its apply lock, before it writes {@code written} (also when it writes nothing: that
     * notes the generation as seen), with no earlier write of the tail still landing.
     *
     * @return the generation they were logged under, or empty when no cutover is logging
     */
    public Optional<String> record(Collection<String> written) {
        while (true) {
            // a generation started between two calls of one record: logged again under it, all of them, since a
            // cutover that sees it noted takes the older set as complete (the keys also left there cost a compare)
            Logged logged = log("*", written);
            if (logged.logged()) return logged.generation();
        }
    }

    /**
     * As {@link #record}, while writes the tail logged under {@code expected} (empty: logged under none) may still be
     * landing: only if the log's generation is still that one, since noting a newer one as seen would tell a cutover
     * those writes had finished. Otherwise no newer generation is noted (nor every key logged), and the tail waits for
     * its writes and records again.
     */
    public Logged recordUnder(Optional<String> expected, Collection<String> written) {
        return log(expected.orElse(""), written);
    }

    /**
     * @param want the generation expected: {@code *} any, empty none; the calls after the first expect the one it
     *     logged under
     */
    private Logged log(String want, Collection<String> written) {
        List<String> all = new ArrayList<>(written);
        Object gen = null;
        int i = 0;
        do {
            List<String> args = new ArrayList<>();
            args.add(keys.keyLogKeysPrefix());
            args.add(i == 0 ? want : gen.toString());
            args.addAll(all.subList(i, Math.min(all.size(), i + CHUNK)));
            gen = RECORD.eval(redis, List.of(keys.keyLog(), keys.keyLogSeen()), args);
            if (gen instanceof Long) return new Logged(false, Optional.empty()); // another generation: not all logged
            if (gen == null) return new Logged(true, Optional.empty()); // not logging: no need to send the rest
            i += CHUNK;
        } while (i < all.size());
        return new Logged(true, Optional.of(gen.toString()));
    }

    /**
     * What {@link #recordUnder} did: logged the keys under {@code generation} (empty when no cutover logs), or not
     * (all of them) because the log had moved on from the one expected; then no newer generation was noted as seen.
     */
    public record Logged(boolean logged, Optional<String> generation) {}
}
