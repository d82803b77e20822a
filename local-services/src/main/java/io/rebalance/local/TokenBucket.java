package io.rebalance.local;

/** Write units refilled at {@code rate} per second, at most one second's worth held: a table's or a partition's. */
final class TokenBucket {
    final double rate;
    double tokens;
    long at = System.nanoTime();

    TokenBucket(long rate) {
        this.rate = rate;
        this.tokens = rate;
    }

    void refill(long now) {
        tokens = Math.min(rate, tokens + (now - at) / 1e9 * rate);
        at = now;
    }
}
