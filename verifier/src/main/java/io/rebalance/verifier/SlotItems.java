package io.rebalance.verifier;

import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.dynamo.TargetTable;
import io.rebalance.core.retry.Retrier;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.slot.TableKey;
import io.rebalance.core.source.PartRows;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.KeysAndAttributes;
import software.amazon.awssdk.services.dynamodb.model.QueryResponse;

/**
 * The DynamoDB side of verification: a slot's items read through the slot index (one Query, paged, never a table
 * scan) and hashed as they arrive; only ids and 8-byte hashes are kept, so memory grows by ~100 bytes per item.
 * Items that must be looked at again are fetched by key with strongly consistent reads, because the index itself
 * is only eventually consistent.
 */
final class SlotItems {
    private final DynamoDbClient dynamo;
    private final String table;
    private final SlotIndex index;
    private final TableKey key;
    private final CanonicalItem canonical;
    private final Retrier retrier;
    private final RowHash hash;
    /** The items compared: every item, or those of some parts' rows (set before the first read). */
    private volatile PartRows rows = PartRows.ALL;

    SlotItems(
            DynamoDbClient dynamo,
            String table,
            SlotIndex index,
            TableKey key,
            CanonicalItem canonical,
            RowHash hash,
            Retrier retrier) {
        this.dynamo = dynamo;
        this.table = table;
        this.index = index;
        this.key = key;
        this.canonical = canonical;
        this.retrier = retrier;
        this.hash = hash;
    }

    /** Compares only the items of {@code rows} from here on, as the source's side does. */
    void only(PartRows rows) {
        this.rows = rows;
    }

    /** Every item of one slot, hashed: id to row hash in key order, and the slot's fingerprint. */
    record Read(NavigableMap<String, Long> hashes, Fingerprint fingerprint) {}

    Read read(Slot slot) throws InterruptedException {
        NavigableMap<String, Long> hashes = new TreeMap<>(KeyOrder.of(key));
        Fingerprint fp = Fingerprint.EMPTY;
        for (String value : index.values(slot)) {
            Map<String, AttributeValue> start = null;
            do {
                Map<String, AttributeValue> from = start;
                QueryResponse page = retrier.call(
                        "read slot " + value + " from " + table + " index " + index.name(),
                        () -> dynamo.query(b -> b.tableName(table)
                                .indexName(index.name())
                                .keyConditionExpression("#s = :s")
                                .expressionAttributeNames(Map.of("#s", index.attribute()))
                                .expressionAttributeValues(Map.of(":s", AttributeValue.fromS(value)))
                                .limit(TargetTable.PAGE_ITEMS)
                                .exclusiveStartKey(from)));
                for (Map<String, AttributeValue> item : page.items()) {
                    String id = key.textOf(item);
                    if (!rows.holds(id)) continue;
                    long h = hash(slot, value, id, item);
                    hashes.put(id, h);
                    fp = fp.plus(h);
                }
                start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty()
                        ? page.lastEvaluatedKey()
                        : null;
            } while (start != null);
        }
        return new Read(hashes, fp);
    }

    /**
     * Every item of the table, hashed as {@link #read} hashes it and summed by the slot its slot attribute names: one
     * parallel Scan ({@code segments} at once), whose reads grow with the items, not with the hours. Items without a
     * slot attribute naming an hour are left out, as the slot index leaves them out.
     */
    Map<Slot, Fingerprint> scan(int segments) throws InterruptedException {
        Map<Slot, Fingerprint> out = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(segments);
        try {
            List<Future<?>> running = new ArrayList<>();
            for (int segment = 0; segment < segments; segment++) {
                int seg = segment;
                running.add(pool.submit(() -> {
                    scanSegment(seg, segments, out);
                    return null;
                }));
            }
            for (Future<?> f : running) {
                try {
                    f.get();
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof InterruptedException i) throw i;
                    throw new IllegalStateException("scanning " + table + " failed: " + e.getCause(), e.getCause());
                }
            }
        } finally {
            pool.shutdownNow();
        }
        return out;
    }

    /** DynamoDB's estimate of the table's items (it refreshes it about every six hours). */
    long itemCountEstimate() {
        return dynamo.describeTable(b -> b.tableName(table)).table().itemCount();
    }

    private void scanSegment(int segment, int segments, Map<Slot, Fingerprint> out) throws InterruptedException {
        Map<String, AttributeValue> start = null;
        do {
            Map<String, AttributeValue> from = start;
            var page = retrier.call(
                    "scan " + table + " (segment " + segment + " of " + segments + ")",
                    () -> dynamo.scan(b -> b.tableName(table)
                            .segment(segment)
                            .totalSegments(segments)
                            .limit(TargetTable.PAGE_ITEMS)
                            .exclusiveStartKey(from)));
            for (Map<String, AttributeValue> item : page.items()) {
                String value = slotValue(item);
                String name = SlotIndex.slotName(value);
                Slot slot;
                try {
                    slot = name == null ? null : Slot.parse(name);
                } catch (IllegalArgumentException notAnHour) {
                    continue; // no Query of the slot index reads it either
                }
                if (slot == null || slot.noTime()) continue;
                String id = key.textOf(item);
                if (!rows.holds(id)) continue;
                long h = hash(slot, value, id, item);
                out.merge(slot, Fingerprint.EMPTY.plus(h), Fingerprint::add);
            }
            start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
        } while (start != null);
    }

    /** An item's row hash, marked when its slot attribute holds the right slot but the wrong shard. */
    private long hash(Slot slot, String value, String id, Map<String, AttributeValue> item) {
        String encoded = canonical.encode(item);
        // an item in the right slot but the wrong shard must not pass unnoticed
        if (!value.equals(index.value(slot, id))) encoded += "?shard=" + value;
        return hash.of(encoded);
    }

    /** The items with these ids, read consistently; ids without an item are absent from the result. */
    Map<String, Map<String, AttributeValue>> get(Collection<String> ids) throws InterruptedException {
        Map<String, Map<String, AttributeValue>> out = new HashMap<>();
        List<String> all = new ArrayList<>(ids);
        for (int i = 0; i < all.size(); i += 100) {
            List<Map<String, AttributeValue>> keys = new ArrayList<>();
            for (String id : all.subList(i, Math.min(all.size(), i + 100))) keys.add(key.dynamoKey(id));
            Map<String, KeysAndAttributes> pending = Map.of(
                    table,
                    KeysAndAttributes.builder().keys(keys).consistentRead(true).build());
            while (!pending.isEmpty()) {
                Map<String, KeysAndAttributes> request = pending;
                var r = retrier.call("read items of " + table, () -> dynamo.batchGetItem(b -> b.requestItems(request)));
                for (Map<String, AttributeValue> item : r.responses().getOrDefault(table, List.of())) {
                    out.put(key.textOf(item), item);
                }
                pending = r.hasUnprocessedKeys() ? r.unprocessedKeys() : Map.of();
                if (!pending.isEmpty()) Thread.sleep(50); // throttled: DynamoDB hands keys back
            }
        }
        return out;
    }

    String slotAttribute() {
        return index.attribute();
    }

    /** The item's slot attribute as stored (with its shard), or null. */
    String slotValue(Map<String, AttributeValue> item) {
        AttributeValue v = item.get(index.attribute());
        return v == null || v.s() == null ? null : v.s();
    }

    /** The slot the item's slot attribute names, or null. */
    String slotOf(Map<String, AttributeValue> item) {
        return SlotIndex.slotName(slotValue(item));
    }

    /** The slot attribute value the item with this id must have in {@code slot}. */
    String expectedSlotValue(Slot slot, String id) {
        return index.value(slot, id);
    }
}
