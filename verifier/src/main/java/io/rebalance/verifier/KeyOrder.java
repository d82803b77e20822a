package io.rebalance.verifier;

import io.rebalance.core.slot.KeyType;
import java.util.Comparator;

/**
 * Key order as Postgres compares keys in the verifier's queries, so that a split point puts each key on the same side
 * in Java as in SQL: text in code point order (Postgres {@code COLLATE "C"}, whatever the column's collation),
 * bigint by value, uuid bytewise (which is the order of its lower-case text).
 */
final class KeyOrder {
    private KeyOrder() {}

    static Comparator<String> of(KeyType type) {
        return switch (type) {
            case TEXT -> CanonicalItem::compareCodePoints;
            case UUID -> Comparator.naturalOrder();
            case BIGINT -> Comparator.comparingLong(Long::parseLong);
        };
    }

    /** The key column as it must appear in a comparison with a split point. */
    static String sqlOperand(String quotedKey, KeyType type) {
        return type == KeyType.TEXT ? quotedKey + " COLLATE \"C\"" : quotedKey;
    }
}
