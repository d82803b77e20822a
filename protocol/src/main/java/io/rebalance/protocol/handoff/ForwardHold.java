package io.rebalance.protocol.handoff;

import io.rebalance.protocol.fence.FenceState;
import io.rebalance.protocol.fence.FenceWriter;
import io.rebalance.protocol.keyspace.HandoffKeys;
import io.rebalance.protocol.route.RouteStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import redis.clients.jedis.AbstractPipeline;
import redis.clients.jedis.Response;
import redis.clients.jedis.UnifiedJedis;

/**
 * The cutover's handshake with the forward tail (ADR 7, point 5). The cutover asks the tail to hold at a WAL position
 * M it noted after closing Postgres to applications. The tail then applies the changes at or before M, skips those
 * after M (from then on only the reverse stream writes Postgres), and once everything up to M is in DynamoDB it
 * acknowledges at a batch boundary, under the applier's lock. From the acknowledgement until the hold is lifted, the
 * tail writes nothing to DynamoDB: no batch, no replay after a restart, no reconciliation, no repair. A write there
 * could overwrite a newer application write with a row the reverse stream has not caught up yet.
 */
public final class ForwardHold {
    private final UnifiedJedis redis;
    private final HandoffKeys keys;

    public ForwardHold(UnifiedJedis redis, HandoffKeys keys) {
        this.redis = redis;
        this.keys = keys;
    }

    /** @param id names one request, so an acknowledgement of an older one never answers a newer one */
    public record Request(String id, long lsn) {
        /** The id of the hold the Postgres fence implies ({@link #effective}); nobody waits for its acknowledgement. */
        public static final String FENCE = "fence";
    }

    public enum Phase {
        /** No hold: the tail applies everything. */
        NONE,
        /** Asked, not yet acknowledged: apply what is at or before the position, skip the rest. */
        REQUESTED,
        /** Acknowledged: write nothing. */
        HELD
    }

    /**
     * @param unanswered a request in Redis not acknowledged yet, which the tail holds for already because the fence
     *     records a flip: the tail answers it at its next batch, having nothing left to apply
     */
    public record State(Phase phase, Request request, boolean unanswered) {
        public static final State NONE = new State(Phase.NONE, null);

        public State(Phase phase, Request request) {
            this(phase, request, false);
        }

        /** Whether the tail may apply a change event at {@code lsn} now. */
        public boolean applies(long lsn) {
            return phase == Phase.NONE || (phase == Phase.REQUESTED && lsn <= request.lsn());
        }

        /** Whether the hold comes from the Postgres fence rather than a request in Redis. */
        public boolean fromFence() {
            return request != null && Request.FENCE.equals(request.id());
        }

        /**
         * Whether reconciliation and repairs must wait: once acknowledged, and whenever the fence implies the hold
         * (DynamoDB may be taking application writes then, and a row read from Postgres could overwrite one).
         */
        public boolean blocksRewrites() {
            return phase == Phase.HELD || fromFence();
        }
    }

    /**
     * The hold as the forward tail must obey it (ADR 8). While the Postgres fence admits applications, none: their
     * changes must reach DynamoDB, and a request left in Redis by a command that died cannot make the tail skip them.
     * Once the fence records a flip (its route is not SOURCE), held: nothing at all is applied.
     * Otherwise Redis' request when there is one; without one, while the fence admits only the reverse stream, a hold
     * at the position where the fence closed, held once the tail has applied past it. Redis may lose a request; the
     * fence cannot, and every application change lies before that position, every reverse-stream write after it.
     *
     * @param pgFence the Postgres fence, or null when none is installed
     * @param appliedLsn the highest position the forward tail has applied (or passed over) up to
     */
    public static State effective(State redis, FenceState pgFence, long appliedLsn) {
        if (pgFence != null && pgFence.writer() == FenceWriter.APP) return State.NONE;
        if (pgFence != null && pgFence.route() != RouteStatus.SOURCE) {
            // The flip is recorded: the tail applied everything up to its hold before DynamoDB opened (ADR 7), and
            // DynamoDB is the store of record. A change replayed from the slot, or let through by a fresh request at
            // a newer position, would write a Postgres row over an application's write: write nothing, whatever
            // Redis holds or forgot.
            if (redis.phase() == Phase.HELD) return redis;
            if (redis.phase() == Phase.REQUESTED) return new State(Phase.HELD, redis.request(), true);
            return new State(Phase.HELD, new Request(Request.FENCE, pgFence.closedLsn()));
        }
        if (redis.phase() != Phase.NONE || pgFence == null || pgFence.writer() != FenceWriter.REVERSE) return redis;
        Request r = new Request(Request.FENCE, pgFence.closedLsn());
        return new State(appliedLsn >= r.lsn() ? Phase.HELD : Phase.REQUESTED, r);
    }

    /** Asks the tail to hold at {@code lsn}; replaces any earlier request. @return the request */
    public Request request(long lsn) {
        Request r = new Request(UUID.randomUUID().toString(), lsn);
        redis.hset(
                keys.hold(),
                Map.of(
                        "id", r.id(),
                        "lsn", Long.toString(lsn),
                        "requested_ms", Long.toString(System.currentTimeMillis())));
        return r;
    }

    /** @return true once the tail has acknowledged {@code r}; false when {@code timeout} passed first */
    public boolean awaitHeld(Request r, Duration timeout) throws InterruptedException {
        return Answer.await(() -> r.id().equals(redis.hget(keys.held(), "id")), timeout);
    }

    /** Lets the tail apply again (after a rollback has given Postgres back to applications, or on abort). */
    public void lift() {
        redis.del(keys.hold(), keys.held());
    }

    public State state() {
        Map<String, String> h = redis.hgetAll(keys.hold());
        return h.isEmpty() ? State.NONE : state(h, redis.hget(keys.held(), "id"));
    }

    /** The states of several holds (a table's parts), read in one round trip. */
    public static List<State> states(UnifiedJedis redis, List<HandoffKeys> holds) {
        List<Response<Map<String, String>>> requests = new ArrayList<>(holds.size());
        List<Response<String>> acks = new ArrayList<>(holds.size());
        try (AbstractPipeline p = redis.pipelined()) {
            for (HandoffKeys k : holds) {
                requests.add(p.hgetAll(k.hold()));
                acks.add(p.hget(k.held(), "id"));
            }
            p.sync();
        }
        List<State> out = new ArrayList<>(holds.size());
        for (int i = 0; i < holds.size(); i++) {
            Map<String, String> h = requests.get(i).get();
            out.add(h.isEmpty() ? State.NONE : state(h, acks.get(i).get()));
        }
        return out;
    }

    private static State state(Map<String, String> hold, String ackedId) {
        Request r = new Request(hold.get("id"), Long.parseLong(hold.get("lsn")));
        return new State(r.id().equals(ackedId) ? Phase.HELD : Phase.REQUESTED, r);
    }

    /** Called by the tail, under the applier's lock, once everything up to the request's position is applied. */
    public void acknowledge(Request r, long appliedLsn) {
        redis.hset(
                keys.held(),
                Map.of(
                        "id", r.id(),
                        "applied_lsn", Lsn.text(appliedLsn),
                        "acked_ms", Long.toString(System.currentTimeMillis())));
    }
}
