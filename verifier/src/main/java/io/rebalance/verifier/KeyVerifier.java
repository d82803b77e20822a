package io.rebalance.verifier;

import io.rebalance.core.slot.Slot;
import io.rebalance.core.slot.SlotKeyspace;
import io.rebalance.verifier.Difference.Kind;
import io.rebalance.verifier.SourceFingerprints.RowAt;
import io.rebalance.verifier.SourceFingerprints.RowNow;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Compares rows and items by key, whichever slots they are in: the cutover's blocked window, where the keys the tail
 * wrote since the slots were verified are a few thousand and the slots many (ADR 7). Postgres hashes the rows next to
 * the data, as for a slot; DynamoDB items are read consistently, several batches at once, and hashed from the same
 * canonical encoding, and the slot attribute must be the one the row's slot gives. Nothing may be in flight: the
 * caller compares while neither store takes writes, so a difference is a difference, with no re-check.
 */
final class KeyVerifier {
    /** Ids per Postgres query. */
    private static final int ROWS = 1000;
    /** Ids per BatchGetItem, DynamoDB's limit. */
    private static final int ITEMS = 100;

    private final SourceFingerprints source;
    private final SlotItems items;
    private final CanonicalItem canonical;
    private final SlotVerifier slots;
    private final SlotKeyspace keyspace;

    KeyVerifier(
            SourceFingerprints source,
            SlotItems items,
            CanonicalItem canonical,
            SlotVerifier slots,
            SlotKeyspace keyspace) {
        this.source = source;
        this.items = items;
        this.canonical = canonical;
        this.slots = slots;
        this.keyspace = keyspace;
    }

    /**
     * Compares these ids, reading their items with {@code parallel} readers while Postgres hashes their rows.
     *
     * @param read receives the items read, by id (those DynamoDB lacks are absent)
     */
    List<Difference> compare(
            Connection c, Collection<String> ids, int parallel, Map<String, Map<String, AttributeValue>> read)
            throws Exception {
        if (ids.isEmpty()) return List.of();
        List<String> all = new ArrayList<>(new LinkedHashSet<>(ids));
        Map<String, Map<String, AttributeValue>> found = new HashMap<>();
        Map<String, RowAt> rows = readItems(all, parallel, found, () -> rows(c, all)); // while Postgres hashes
        read.putAll(found);
        return differences(c, all, rows, found, true);
    }

    /**
     * Reads the items of these ids with {@code parallel} readers, consistently, several batches at once.
     *
     * @param into receives the items read, by id (those DynamoDB lacks are absent)
     */
    void readItems(Collection<String> ids, int parallel, Map<String, Map<String, AttributeValue>> into)
            throws Exception {
        if (!ids.isEmpty()) readItems(new ArrayList<>(new LinkedHashSet<>(ids)), parallel, into, () -> null);
    }

    /** Reads the items while {@code meanwhile} runs on the calling thread, and returns what it returned. */
    private <T> T readItems(
            List<String> all, int parallel, Map<String, Map<String, AttributeValue>> into, Callable<T> meanwhile)
            throws Exception {
        ExecutorService readers = Executors.newFixedThreadPool(Math.max(1, parallel), r -> {
            Thread t = new Thread(r, "verify-keys");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<Map<String, Map<String, AttributeValue>>>> reads = new ArrayList<>();
            for (int i = 0; i < all.size(); i += ITEMS) {
                List<String> part = all.subList(i, Math.min(all.size(), i + ITEMS));
                reads.add(readers.submit(() -> items.get(part)));
            }
            T out = meanwhile.call();
            for (Future<Map<String, Map<String, AttributeValue>>> r : reads) {
                try {
                    into.putAll(r.get());
                } catch (ExecutionException e) {
                    throw e.getCause() instanceof Exception x ? x : e;
                }
            }
            return out;
        } finally {
            readers.shutdownNow();
        }
    }

    /**
     * Compares these ids against items read before, reading only their rows: for a store that takes no writes, where
     * its items are final. What differs is named by id only, without its attributes (one query fewer).
     *
     * @param found the items, by id; an id absent here is one DynamoDB lacks
     */
    List<Difference> compareRows(Connection c, Collection<String> ids, Map<String, Map<String, AttributeValue>> found)
            throws Exception {
        List<String> all = new ArrayList<>(new LinkedHashSet<>(ids));
        return differences(c, all, rows(c, all), found, false);
    }

    private Map<String, RowAt> rows(Connection c, List<String> all) throws Exception {
        Map<String, RowAt> rows = new HashMap<>();
        for (int i = 0; i < all.size(); i += ROWS) {
            rows.putAll(source.byKey(c, all.subList(i, Math.min(all.size(), i + ROWS))));
        }
        return rows;
    }

    /** @param name whether to name the attributes of the rows that differ (reads their tokens) */
    private List<Difference> differences(
            Connection c,
            List<String> all,
            Map<String, RowAt> rows,
            Map<String, Map<String, AttributeValue>> found,
            boolean name)
            throws Exception {
        List<Difference> out = new ArrayList<>();
        Map<String, Slot> differing = new HashMap<>();
        for (String id : all) {
            RowAt row = rows.get(id);
            // a row whose time column is NULL or infinite has no instant: it is the no-time slot's
            Slot slot = row == null ? null : keyspace.rowSlot(row.instant());
            Map<String, AttributeValue> item = found.get(id);
            if (slot == null && item == null) continue;
            if (slot == null) out.add(new Difference(id, Kind.EXTRA, List.of()));
            else if (item == null) out.add(new Difference(id, Kind.MISSING, List.of()));
            else if (row.hash() != source.hashOf(canonical.encode(item))
                    || !items.expectedSlotValue(slot, id).equals(items.slotValue(item))) {
                differing.put(id, slot);
            }
        }
        if (!differing.isEmpty() && !name) {
            differing.keySet().forEach(id -> out.add(new Difference(id, Kind.DIFFERENT, List.of())));
        } else if (!differing.isEmpty()) {
            Map<String, List<String>> tokens = source.tokens(c, differing.keySet());
            differing.forEach((id, slot) -> out.add(new Difference(
                    id,
                    Kind.DIFFERENT,
                    tokens.get(id) == null // gone since the hash: someone writes after all, and it is a difference
                            ? List.of()
                            : slots.attributes(
                                    slot, id, new RowNow(rows.get(id).hash(), true), tokens.get(id), found.get(id)))));
        }
        out.sort(Comparator.comparing(Difference::id));
        return out;
    }
}
