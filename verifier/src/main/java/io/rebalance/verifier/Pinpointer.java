package io.rebalance.verifier;

import io.rebalance.core.slot.Slot;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Objects;

/**
 * Finds the ids behind a slot mismatch by splitting, so the work follows the differences and not the slot size.
 * The DynamoDB side is already in memory as id to hash; each step splits a part at {@code fanout - 1} of its
 * DynamoDB ids, asks Postgres for all the sub-parts' fingerprints in one query, and descends only into the sub-parts
 * that differ. A part is settled row by row (ids and hashes only) once either side has at most {@code leafRows}
 * rows in it: then its Postgres rows are few, or nearly all of them are missing from DynamoDB and so are
 * differences anyway.
 */
final class Pinpointer {
    /** An id whose hashes differ: present on one side only, or on both with different content. */
    record Suspect(String id, Difference.Kind kind) {}

    private final SourceFingerprints source;
    private final int fanout;
    private final int leafRows;

    Pinpointer(SourceFingerprints source, int fanout, int leafRows) {
        this.source = source;
        this.fanout = fanout;
        this.leafRows = leafRows;
    }

    List<Suspect> find(Connection c, Slot slot, NavigableMap<String, Long> items, Fingerprint sourceFp)
            throws SQLException {
        List<Suspect> out = new ArrayList<>();
        descend(c, slot, KeyRange.ALL, items, sourceFp, out);
        return out;
    }

    private void descend(
            Connection c,
            Slot slot,
            KeyRange range,
            NavigableMap<String, Long> items,
            Fingerprint sourceFp,
            List<Suspect> out)
            throws SQLException {
        if (sourceFp.count() <= leafRows || items.size() <= leafRows) {
            compareRows(source.rowHashes(c, slot, range), items, out);
            return;
        }
        List<String> splits = splitPoints(items);
        List<Fingerprint> parts = source.parts(c, slot, range, splits);
        for (int i = 0; i < parts.size(); i++) {
            String from = i == 0 ? range.from() : splits.get(i - 1);
            String to = i == splits.size() ? range.to() : splits.get(i);
            NavigableMap<String, Long> sub = sub(items, from, to);
            Fingerprint target = Fingerprint.EMPTY;
            for (long h : sub.values()) target = target.plus(h);
            if (!target.equals(parts.get(i))) descend(c, slot, new KeyRange(from, to), sub, parts.get(i), out);
        }
    }

    /** {@code fanout - 1} distinct ids splitting {@code items} into parts of equal size. */
    private List<String> splitPoints(NavigableMap<String, Long> items) {
        List<String> keys = new ArrayList<>(items.keySet());
        List<String> splits = new ArrayList<>();
        for (int i = 1; i < fanout; i++) {
            String k = keys.get((int) ((long) keys.size() * i / fanout));
            if (splits.isEmpty() || !Objects.equals(splits.get(splits.size() - 1), k)) splits.add(k);
        }
        return splits;
    }

    private static NavigableMap<String, Long> sub(NavigableMap<String, Long> items, String from, String to) {
        if (from == null && to == null) return items;
        if (from == null) return items.headMap(to, false);
        if (to == null) return items.tailMap(from, true);
        return items.subMap(from, true, to, false);
    }

    private static void compareRows(Map<String, Long> rows, NavigableMap<String, Long> items, List<Suspect> out) {
        for (var row : rows.entrySet()) {
            Long item = items.get(row.getKey());
            if (item == null) out.add(new Suspect(row.getKey(), Difference.Kind.MISSING));
            else if (item.longValue() != row.getValue()) out.add(new Suspect(row.getKey(), Difference.Kind.DIFFERENT));
        }
        for (String id : items.keySet()) {
            if (!rows.containsKey(id)) out.add(new Suspect(id, Difference.Kind.EXTRA));
        }
    }
}
