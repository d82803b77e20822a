package io.rebalance.protocol.fence;

import io.rebalance.protocol.route.RouteStatus;

/**
 * A store's fence for one scope: who may write, the smallest token it accepts from applications, and the copy of
 * the route the fence keeps so the route outlives Redis (ADR 8).
 *
 * @param route the route last flipped to, as recorded by that flip ({@code SOURCE} when installed)
 * @param epoch that route's epoch (1 when installed); never goes down
 * @param closedLsn on the Postgres fence, the WAL position at which it last stopped admitting applications: every
 *     application change lies before it, every reverse-stream write after it (0 when never closed, and on DynamoDB)
 */
public record FenceState(FenceWriter writer, long minToken, RouteStatus route, long epoch, long closedLsn) {
    public boolean admitsApp(long token) {
        return writer == FenceWriter.APP && token >= minToken;
    }

    @Override
    public String toString() {
        return "writer=" + writer.wire() + ", min_token=" + minToken + ", route=" + route + ", epoch=" + epoch;
    }
}
