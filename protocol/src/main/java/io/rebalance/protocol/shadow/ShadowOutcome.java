package io.rebalance.protocol.shadow;

import java.util.Locale;

/** What became of one sampled read's shadow: the other store's answer compared with the route's. */
public enum ShadowOutcome {
    /** Both answers have the same form (after one more read of both where they differed at first). */
    MATCH,
    /** The answers differ, and still did when both were read again. */
    MISMATCH,
    /** The shadow read failed or took longer than its timeout; the application's read was not affected. */
    ERROR,
    /** Not compared: the shadow queue was full (a read whose own store failed is the application's, not counted). */
    SKIPPED;

    /** The name in Redis fields, metric tags and JSON. */
    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }
}
