package io.rebalance.cutover;

import io.rebalance.core.handoff.ReverseDrain;
import io.rebalance.core.keyspace.HandoffKeys;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import redis.clients.jedis.UnifiedJedis;

/** The reverse stream as the cutover sees it: the status the tail publishes every round, and the drain handshake. */
public final class ReverseStreamView {
    private final UnifiedJedis redis;
    private final HandoffKeys keys;
    private final Duration freshness;
    private final ReverseDrain drain;

    /** @param freshness how old the last published round may be for the stream to count as running */
    public ReverseStreamView(UnifiedJedis redis, HandoffKeys keys, Duration freshness) {
        this.redis = redis;
        this.keys = keys;
        this.freshness = freshness;
        this.drain = new ReverseDrain(redis, keys);
    }

    public Map<String, String> status() {
        return redis.hgetAll(keys.reverseStatus());
    }

    public ReverseDrain drain() {
        return drain;
    }

    /** @return why a rollback could not rely on the reverse stream now, or empty when it can */
    public Optional<String> notReady() {
        Map<String, String> s = status();
        if (s.isEmpty()) return Optional.of("no reverse stream has run: start `rebalance tail`");
        String gap = s.get("gap");
        if (gap != null && !gap.isEmpty()) {
            return Optional.of("it lost records (" + gap + ") past DynamoDB Streams' retention, so Postgres may lack"
                    + " writes; verify every slot (`rebalance verify --all`) before trusting Postgres again");
        }
        long age = System.currentTimeMillis() - Long.parseLong(s.getOrDefault("updated_ms", "0"));
        String error = s.getOrDefault("last_error", "");
        if (age > freshness.toMillis()) {
            return Optional.of("it last reported " + age + " ms ago: start `rebalance tail`, which runs it"
                    + (error.isEmpty() ? "" : " (its last round failed: " + error + ")"));
        }
        if ("failing".equals(s.get("state"))) {
            // a failing round reports itself, fresh: say why, not that nobody runs it
            long since = Long.parseLong(s.getOrDefault("failing_since_ms", s.getOrDefault("updated_ms", "0")));
            return Optional.of("its rounds fail, for " + (System.currentTimeMillis() - since) / 1000 + " s now: "
                    + error + "; fix the cause (the tail's log has each failure): the tail retries every second");
        }
        if ("waiting".equals(s.get("state"))) {
            return Optional.of("it is waiting for " + s.getOrDefault("waiting_for", "the forward tail to hold")
                    + ": its records are neither written nor passed over until then");
        }
        if (!"streaming".equals(s.get("state"))) {
            return Optional.of("its state is '" + s.get("state") + "' (is the target table's stream enabled? run"
                    + " `rebalance cutover --prepare`)");
        }
        if (!error.isEmpty()) return Optional.of("its last round failed: " + error);
        return Optional.empty();
    }
}
