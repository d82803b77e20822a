package io.rebalance.verifier;

/**
 * Part of a slot's key space, {@code from} inclusive and {@code to} exclusive, each null for open; both sides
 * compare keys the same way (see {@link KeyOrder}).
 */
record KeyRange(String from, String to) {
    static final KeyRange ALL = new KeyRange(null, null);
}
