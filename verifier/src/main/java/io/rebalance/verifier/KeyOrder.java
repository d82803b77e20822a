package io.rebalance.verifier;

import io.rebalance.core.slot.KeyType;
import io.rebalance.core.slot.TableKey;
import io.rebalance.protocol.CodePoints;
import java.util.Comparator;
import java.util.List;

/**
 * Key order as Postgres compares keys in the verifier's queries, so that a split point puts each key on the same side
 * in Java as in SQL: text in code point order (Postgres {@code COLLATE "C"}, whatever the column's collation),
 * bigint by value, uuid bytewise (which is the order of its lower-case text).
 */
final class KeyOrder {
    private KeyOrder() {}

    static Comparator<String> of(KeyType type) {
        return switch (type) {
            case TEXT -> CodePoints::compare;
            case UUID -> Comparator.naturalOrder();
            case BIGINT -> Comparator.comparingLong(Long::parseLong);
        };
    }

    /** A key's order: its one column's, or for two columns the first's, then the second's (a row comparison). */
    static Comparator<String> of(TableKey key) {
        if (!key.composite()) return of(key.types().get(0));
        Comparator<String> first = of(key.types().get(0));
        Comparator<String> second = of(key.types().get(1));
        return (a, b) -> {
            List<String> x = key.parts(a);
            List<String> y = key.parts(b);
            int c = first.compare(x.get(0), y.get(0));
            return c != 0 ? c : second.compare(x.get(1), y.get(1));
        };
    }

    /** The key as it must appear in a comparison with a split point (one placeholder per key column after it). */
    static String sqlOperand(TableKey key) {
        return key.operand("", true);
    }
}
