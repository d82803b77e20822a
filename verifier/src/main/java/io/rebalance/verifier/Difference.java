package io.rebalance.verifier;

import java.util.List;

/**
 * One id whose item is not what its row says, after re-checking: MISSING (a row without an item), EXTRA (an item
 * without a row) or DIFFERENT (both, unequal), with the attributes that differ as canonical tokens.
 */
public record Difference(String id, Kind kind, List<AttributeDifference> attributes) {
    public enum Kind {
        MISSING,
        EXTRA,
        DIFFERENT
    }

    /** {@code expected} is what the row encodes to, {@code found} what the item holds; both canonical tokens. */
    public record AttributeDifference(String attribute, String expected, String found) {}

    /** One line for people: {@code 01J... DIFFERENT payload (expected N3:2.5, found S3:2.5)}. */
    public String describe() {
        return switch (kind) {
            case MISSING -> id + "  MISSING in DynamoDB";
            case EXTRA -> id + "  EXTRA in DynamoDB (no such row in this slot)";
            case DIFFERENT ->
                id + "  DIFFERENT "
                        + String.join(
                                "; ",
                                attributes.stream()
                                        .map(a -> a.attribute() + " (expected " + shorten(a.expected()) + ", found "
                                                + shorten(a.found()) + ")")
                                        .toList());
        };
    }

    static String shorten(String token) {
        return token.length() <= 60 ? token : token.substring(0, 57) + "...";
    }
}
