package io.rebalance.protocol.fence;

import java.util.Locale;

/** Who a store's fence lets write a scope (ADR 7). */
public enum FenceWriter {
    /** Applications through the guard, with a token at least the fence's minimum. */
    APP,
    /** Only the reverse tail (Postgres while the route is TARGET). */
    REVERSE,
    /** Nobody: the store is not written for this scope. */
    NONE;

    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static FenceWriter ofWire(String s) {
        return valueOf(s.toUpperCase(Locale.ROOT));
    }
}
