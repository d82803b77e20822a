package io.rebalance.protocol.route;

/** Where a scope's reads or writes go. */
public enum Target {
    POSTGRES,
    DYNAMODB;

    public String wire() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    public static Target ofWire(String s) {
        return valueOf(s.toUpperCase(java.util.Locale.ROOT));
    }
}
