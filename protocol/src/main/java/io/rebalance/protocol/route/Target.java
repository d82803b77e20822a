package io.rebalance.protocol.route;

import java.util.Locale;

/** Where a scope's reads or writes go. */
public enum Target {
    POSTGRES,
    DYNAMODB;

    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Target ofWire(String s) {
        return valueOf(s.toUpperCase(Locale.ROOT));
    }
}
