package io.rebalance.testkit;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ScanRequest;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;

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

    /** @return one line per difference (missing, extra, or an attribute that differs); empty when equal */
    public static List<String> differences(Connection pg, String table, DynamoDbClient dynamo, String dynamoTable)
            throws SQLException {
        Map<String, Map<String, AttributeValue>> items = scanAll(dynamo, dynamoTable);
        List<String> diffs = new ArrayList<>();
        int rows = 0;
        try (Statement st = pg.createStatement()) {
            st.setFetchSize(5_000);
            pg.setAutoCommit(false);
            try (ResultSet rs =
                    st.executeQuery("SELECT id, room_id, kind, data::text, created_at, seq FROM " + table)) {
                while (rs.next()) {
                    rows++;
                    String id = rs.getString(1);
                    Map<String, AttributeValue> item = items.remove(id);
                    if (item == null) {
                        diffs.add("missing " + id);
                        continue;
                    }
                    expect(
                            diffs,
                            id,
                            "room_id",
                            rs.getObject(2).toString(),
                            item.get("room_id").s());
                    expect(diffs, id, "kind", rs.getString(3), item.get("kind").s());
                    String data = rs.getString(4);
                    if (data == null) {
                        if (!Boolean.TRUE.equals(item.get("data").nul()))
                            diffs.add(id + " data: expected NULL, got " + item.get("data"));
                    } else if (!sameJson(JSON.readTree(data), toJson(item.get("data")))) {
                        diffs.add(id + " data: expected " + data + ", got " + item.get("data"));
                    }
                    String ts = rs.getObject(5, OffsetDateTime.class)
                            .withOffsetSameInstant(ZoneOffset.UTC)
                            .format(ISO_MICROS);
                    expect(diffs, id, "created_at", ts, item.get("created_at").s());
                    expect(
                            diffs,
                            id,
                            "seq",
                            Long.toString(rs.getLong(6)),
                            item.get("seq").n());
                    if (item.size() != 6) diffs.add(id + " has attributes " + item.keySet());
                }
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                throw new IllegalStateException(e);
            } finally {
                pg.setAutoCommit(true);
            }
        }
        items.keySet().forEach(id -> diffs.add("extra " + id));
        if (rows == 0) diffs.add("source table " + table + " is empty: nothing was compared");
        return diffs;
    }

    private static void expect(List<String> diffs, String id, String attr, String expected, String actual) {
        if (!expected.equals(actual)) diffs.add(id + " " + attr + ": expected " + expected + ", got " + actual);
    }

    public static Map<String, Map<String, AttributeValue>> scanAll(DynamoDbClient dynamo, String table) {
        Map<String, Map<String, AttributeValue>> out = new HashMap<>();
        Map<String, AttributeValue> start = null;
        do {
            ScanRequest.Builder b = ScanRequest.builder().tableName(table);
            if (start != null) b.exclusiveStartKey(start);
            ScanResponse r = dynamo.scan(b.build());
            for (Map<String, AttributeValue> item : r.items())
                out.put(item.get("id").s(), item);
            start = r.hasLastEvaluatedKey() && !r.lastEvaluatedKey().isEmpty() ? r.lastEvaluatedKey() : null;
        } while (start != null);
        return out;
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
