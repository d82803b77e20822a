package io.rebalance.cdc;

import io.rebalance.protocol.keyspace.TailKeys;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import java.util.UUID;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.args.ListDirection;

/**
 * Repairs asked of the running tail. {@code verify --repair} writes keys again from Postgres as it is now; done
 * beside the tail, a repair that read a row just before the tail applied a newer change could put the older row
 * back after it, for good. So while a tail runs, the repair is a request in Redis that the tail carries out
 * through its {@link ChangeApplier}, one call at a time with the stream: the later read is the later write.
 *
 * <p>A request is its keys (a list) and its id in a queue. The tail moves the id to a processing list, applies
 * the keys, answers, and only then drops the id, so a tail that dies mid-way leaves it for the next one (applying
 * keys twice is harmless: each write is the row as it is then).
 */
public final class RepairQueue {
    private static final int CHUNK = 500;
    private static final long ANSWER_TTL_SECONDS = 600;

    private final UnifiedJedis redis;
    private final TailKeys keys;

    public RepairQueue(UnifiedJedis redis, TailKeys keys) {
        this.redis = redis;
        this.keys = keys;
    }

    /**
     * Asks the tail to write {@code ids} again and waits for its answer.
     *
     * @return how many items the tail put or deleted; empty when it did not answer within {@code timeout}
     */
    public OptionalInt submit(List<String> ids, Duration timeout) {
        if (ids.isEmpty()) return OptionalInt.of(0);
        String id = UUID.randomUUID().toString();
        redis.rpush(keys.repairRequest(id), ids.toArray(String[]::new));
        redis.expire(keys.repairRequest(id), ANSWER_TTL_SECONDS);
        redis.rpush(keys.repairQueue(), id);
        List<String> answer = redis.blpop(Math.max(1, (int) timeout.toSeconds()), keys.repairAnswer(id));
        redis.del(keys.repairAnswer(id));
        return answer == null ? OptionalInt.empty() : OptionalInt.of(Integer.parseInt(answer.get(1)));
    }

    /**
     * The tail's side: carries out one request, first any a previous tail took and did not answer, else the next in
     * the queue, waiting up to {@code waitSeconds} for one.
     *
     * @return whether there was one
     */
    boolean serveOne(ChangeApplier applier, double waitSeconds) throws Exception {
        String id = redis.lindex(keys.repairing(), 0);
        if (id == null) {
            id = redis.blmove(
                    keys.repairQueue(), keys.repairing(), ListDirection.LEFT, ListDirection.RIGHT, waitSeconds);
        }
        if (id == null) return false;
        List<String> ids = redis.lrange(keys.repairRequest(id), 0, -1);
        int written = 0;
        for (int i = 0; i < ids.size(); i += CHUNK) {
            written += applier.apply(ids.subList(i, Math.min(ids.size(), i + CHUNK)));
        }
        redis.rpush(keys.repairAnswer(id), Integer.toString(written));
        redis.expire(keys.repairAnswer(id), ANSWER_TTL_SECONDS);
        redis.del(keys.repairRequest(id));
        redis.lrem(keys.repairing(), 1, id); // only after the answer: a crash before re-serves it
        return true;
    }
}
