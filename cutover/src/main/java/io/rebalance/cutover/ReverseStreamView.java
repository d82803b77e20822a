package io.rebalance.cutover;

import io.rebalance.protocol.handoff.ReverseDrain;
import io.rebalance.protocol.handoff.ReverseStatus;
import io.rebalance.protocol.keyspace.HandoffKeys;
import java.time.Duration;
import java.util.Optional;
import redis.clients.jedis.UnifiedJedis;

/** The reverse stream as the cutover sees it: the status the tail publishes every round, and the drain handshake. */
public final class ReverseStreamView {
    private final ReverseStatus status;
    private final Duration freshness;
    private final ReverseDrain drain;

    /** @param freshness how old the last published round may be for the stream to count as running */
    public ReverseStreamView(UnifiedJedis redis, HandoffKeys keys, Duration freshness) {
        this.status = new ReverseStatus(redis, keys);
        this.freshness = freshness;
        this.drain = new ReverseDrain(redis, keys);
    }

    public ReverseDrain drain() {
        return drain;
    }

    /** @return why a rollback could not rely on the reverse stream now, or empty when it can */
    public Optional<String> notReady() {
        Optional<ReverseStatus.Report> read = status.read();
        if (read.isEmpty()) return Optional.of("no reverse stream has run: start `rebalance tail`");
        ReverseStatus.Report s = read.get();
        String gap = s.gap();
        if (!gap.isEmpty()) {
            return Optional.of("it lost records (" + gap + ") past DynamoDB Streams' retention, so Postgres may lack"
                    + " writes; verify every slot (`rebalance verify --all`) before trusting Postgres again");
        }
        long age = System.currentTimeMillis() - s.updatedMs();
        String error = s.lastError();
        if (age > freshness.toMillis()) {
            return Optional.of("it last reported " + age + " ms ago: start `rebalance tail`, which runs it"
                    + (error.isEmpty() ? "" : " (its last round failed: " + error + ")"));
        }
        if (ReverseStatus.FAILING.equals(s.state())) {
            // a failing round reports itself, fresh: say why, not that nobody runs it
            long since = s.failingSinceMs() == 0 ? s.updatedMs() : s.failingSinceMs();
            return Optional.of("its rounds fail, for " + (System.currentTimeMillis() - since) / 1000 + " s now: "
                    + error + "; fix the cause (the tail's log has each failure): the tail retries every second");
        }
        if (ReverseStatus.WAITING.equals(s.state())) {
            return Optional.of("it is waiting for "
                    + (s.waitingFor().isEmpty() ? "the forward tail to hold" : s.waitingFor())
                    + ": its records are neither written nor passed over until then");
        }
        if (!ReverseStatus.STREAMING.equals(s.state())) {
            return Optional.of("its state is '" + s.state() + "' (is the target table's stream enabled? run"
                    + " `rebalance cutover --prepare`)");
        }
        if (!error.isEmpty()) return Optional.of("its last round failed: " + error);
        return Optional.empty();
    }
}
