package io.rebalance.testkit;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.rebalance.core.dynamo.TargetTable;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.slot.Ulid;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BatchGetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.KeysAndAttributes;

/**
 * Compares a generated room_events table with its DynamoDB copy attribute by attribute, without the codec under
 * test: Postgres values come through typed JDBC getters (OffsetDateTime, UUID, long) and json is compared as
 * Jackson trees with exact decimals. A codec bug therefore shows up here instead of agreeing with itself.
 */
public final class RoomEventsComparison {
    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .enable(DeserializationFeature.USE_BIG_INTEGER_FOR_INTS);
    private static final DateTimeFormatter ISO_MICROS = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSS'Z'");

    private RoomEventsComparison() {}

    /**
     * Reads every row, fetches its item by key (BatchGetItem, in parallel: a full Scan of DynamoDB Local is several
     * times slower), compares, and counts the table's items to catch extras.
     *
     * @return one line per difference (missing, extra, or an attribute that differs); empty when equal
     */
    public static List<String> differences(Connection pg, String table, DynamoDbClient dynamo, String dynamoTable)
            throws Exception {
        List<String> diffs = Collections.synchronizedList(new ArrayList<>());
        ExecutorService pool = Executors.newFixedThreadPool(4);
        List<Future<?>> pending = new ArrayList<>();
        long rows = 0;
        try (Statement st = pg.createStatement()) {
            pg.setAutoCommit(false);
            st.setFetchSize(5_000);
            try (ResultSet rs =
                    st.executeQuery("SELECT id, room_id, kind, data::text, created_at, seq FROM " + table)) {
                List<Row> batch = new ArrayList<>(100);
                while (rs.next()) {
                    rows++;
                    batch.add(new Row(
                            rs.getString(1),
                            rs.getObject(2).toString(),
                            rs.getString(3),
                            rs.getString(4),
                            rs.getObject(5, OffsetDateTime.class)
                                    .withOffsetSameInstant(ZoneOffset.UTC)
                                    .format(ISO_MICROS),
                            rs.getLong(6)));
                    if (batch.size() == 100) {
                        List<Row> b = batch;
                        pending.add(pool.submit(() -> compareBatch(b, dynamo, dynamoTable, diffs)));
                        batch = new ArrayList<>(100);
                    }
                }
                List<Row> b = batch;
                if (!b.isEmpty()) pending.add(pool.submit(() -> compareBatch(b, dynamo, dynamoTable, diffs)));
            } finally {
                pg.setAutoCommit(true);
            }
            for (Future<?> f : pending) f.get();
        } finally {
            pool.shutdown();
        }
        long items = TargetTable.countItems(dynamo, dynamoTable, 4);
        long found = rows - diffs.stream().filter(d -> d.startsWith("missing ")).count();
        // against the rows found, not all rows: one missing and one extra item must not cancel out
        if (items != found)
            diffs.add((items - found) + " extra items: " + items + " in DynamoDB, " + found + " of them match rows");
        if (rows == 0) diffs.add("source table " + table + " is empty: nothing was compared");
        return diffs;
    }

    private record Row(String id, String roomId, String kind, String data, String createdAt, long seq) {}

    private static void compareBatch(List<Row> rows, DynamoDbClient dynamo, String table, List<String> diffs) {
        Map<String, Map<String, AttributeValue>> items = new HashMap<>();
        List<Map<String, AttributeValue>> keys = rows.stream()
                .map(r -> Map.of("id", AttributeValue.fromS(r.id())))
                .toList();
        Map<String, KeysAndAttributes> request = Map.of(
                table,
                KeysAndAttributes.builder().keys(keys).consistentRead(true).build());
        while (!request.isEmpty()) {
            Map<String, KeysAndAttributes> ask = request;
            BatchGetItemResponse r = dynamo.batchGetItem(b -> b.requestItems(ask));
            r.responses()
                    .getOrDefault(table, List.of())
                    .forEach(i -> items.put(i.get("id").s(), i));
            request = r.hasUnprocessedKeys() ? r.unprocessedKeys() : Map.of();
        }
        for (Row row : rows) {
            Map<String, AttributeValue> item = items.get(row.id());
            if (item == null) {
                diffs.add("missing " + row.id());
                continue;
            }
            String id = row.id();
            expect(diffs, id, "room_id", row.roomId(), item.get("room_id").s());
            expect(diffs, id, "kind", row.kind(), item.get("kind").s());
            try {
                if (row.data() == null) {
                    if (!Boolean.TRUE.equals(item.get("data").nul()))
                        diffs.add(id + " data: expected NULL, got " + item.get("data"));
                } else if (!sameJson(JSON.readTree(row.data()), toJson(item.get("data")))) {
                    diffs.add(id + " data: expected " + row.data() + ", got " + item.get("data"));
                }
            } catch (JsonProcessingException e) {
                throw new IllegalStateException(e);
            }
            expect(
                    diffs,
                    id,
                    "created_at",
                    row.createdAt(),
                    item.get("created_at").s());
            expect(diffs, id, "seq", Long.toString(row.seq()), item.get("seq").n());
            // the slot attribute, from the ULID's own time (not through the codec's slot function)
            String slot = Slot.containing(Instant.ofEpochMilli(Ulid.millis(id))).name();
            String got = item.get("_slot") == null ? null : item.get("_slot").s();
            // a key range (slots.timeFrom: none) is Postgres' to tell: the test compares it with the stored ranges
            if (got == null || !got.matches("r\\d{6}")) expect(diffs, id, "_slot", slot, got);
            if (item.size() != 7) diffs.add(id + " has attributes " + item.keySet());
        }
    }

    private static void expect(List<String> diffs, String id, String attr, String expected, String actual) {
        if (!expected.equals(actual)) diffs.add(id + " " + attr + ": expected " + expected + ", got " + actual);
    }

    /** DynamoDB attribute to a Jackson tree, numbers as exact decimals. */
    static JsonNode toJson(AttributeValue v) {
        JsonNodeFactory f = JsonNodeFactory.withExactBigDecimals(true);
        if (v.s() != null) return f.textNode(v.s());
        if (v.n() != null) return f.numberNode(new BigDecimal(v.n()));
        if (v.bool() != null) return f.booleanNode(v.bool());
        if (Boolean.TRUE.equals(v.nul())) return f.nullNode();
        if (v.hasL()) {
            var arr = f.arrayNode();
            v.l().forEach(x -> arr.add(toJson(x)));
            return arr;
        }
        ObjectNode obj = f.objectNode();
        v.m().forEach((k, x) -> obj.set(k, toJson(x)));
        return obj;
    }

    /** Equal as JSON values: numbers by value (1.50 equals 1.5), objects regardless of key order. */
    static boolean sameJson(JsonNode a, JsonNode b) {
        if (a.isNumber() && b.isNumber()) return a.decimalValue().compareTo(b.decimalValue()) == 0;
        if (a.isObject() && b.isObject()) {
            if (a.size() != b.size()) return false;
            var it = a.fieldNames();
            while (it.hasNext()) {
                String k = it.next();
                if (!b.has(k) || !sameJson(a.get(k), b.get(k))) return false;
            }
            return true;
        }
        if (a.isArray() && b.isArray()) {
            if (a.size() != b.size()) return false;
            for (int i = 0; i < a.size(); i++) if (!sameJson(a.get(i), b.get(i))) return false;
            return true;
        }
        return a.equals(b);
    }
}
