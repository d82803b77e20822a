package io.rebalance.core.source;

import io.rebalance.core.slot.TableKey;
import io.rebalance.protocol.part.PartMap;
import java.util.List;
import java.util.Set;

/**
 * The rows a command over a table moved part by part looks at (ADR 20): those of some of its parts, told apart by the
 * partition-key value in SQL and in a key's text alike; {@link #ALL} for every row.
 *
 * @param names the parts whose rows count, or null for every row
 */
public record PartRows(PartMap parts, Set<String> names, TableKey key, String column) {
    public static final PartRows ALL = new PartRows(PartMap.WHOLE, null, null, null);

    /**
     * @param column the partition-key column, quoted
     * @param names the parts, each one {@code parts} has
     */
    public static PartRows of(PartMap parts, TableKey key, String column, Set<String> names) {
        return new PartRows(parts, Set.copyOf(names), key, column);
    }

    public boolean all() {
        return names == null;
    }

    /** Whether the row of this key (its text, as the codec writes it) is one of these parts'. */
    public boolean holds(String keyText) {
        return all() || names.contains(parts.partOf(key.parts(keyText).get(0)).name());
    }

    /** The keys of {@code keys} these rows hold. */
    public List<String> only(List<String> keys) {
        return all() ? keys : keys.stream().filter(this::holds).toList();
    }

    /** A SQL condition (with a leading {@code AND}) for these rows, or nothing for every row. */
    public String andSql() {
        if (all()) return "";
        return names.isEmpty() ? " AND false" : " AND " + parts.sqlFilter(names, column);
    }

    @Override
    public String toString() {
        return all() ? "every row" : "the rows of part" + (names.size() == 1 ? " " : "s ") + String.join(", ", names);
    }
}
