package io.rebalance.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.rebalance.core.codec.ItemSize;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * DynamoDB's write capacity, modelled in front of DynamoDB Local (which has none): an HTTP proxy every process of a
 * test or benchmark points {@code target.endpoint} at. Each table gets a budget of write units per second (a token
 * bucket holding one second), split over {@code ceil(units / 1000)} partitions of at most 1,000 units per second
 * each, an item going to the partition its partition key hashes to, as DynamoDB places it. A write is charged what
 * DynamoDB charges: one unit per started kilobyte of the item ({@link ItemSize}), and as much again for each global
 * secondary index whose key the item holds. Writes past the budget are refused as DynamoDB refuses them: a
 * BatchWriteItem hands the items that did not fit back as {@code UnprocessedItems}, or answers
 * {@code ProvisionedThroughputExceededException} when none fit; a PutItem, UpdateItem or DeleteItem gets the
 * exception. The exception names its reason as DynamoDB's {@code ThrottlingReasons} do:
 * {@code TableWriteProvisionedThroughputExceeded} or {@code KeyRangeThroughputExceeded}. Reads pass untouched.
 */
public final class CapacityModel implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PREFIX = "DynamoDB_20120810.";
    private static final long PARTITION_UNITS = 1_000;
    private static final Set<String> HOP_HEADERS =
            Set.of("host", "content-length", "connection", "transfer-encoding", "expect");

    private final HttpServer server;
    private final ExecutorService threads;
    private final HttpClient http = HttpClient.newHttpClient();
    private final URI target;
    private final long unitsPerSecond;
    private final Map<String, Table> tables = new ConcurrentHashMap<>();

    private final AtomicLong consumed = new AtomicLong();
    private final AtomicLong writeRequests = new AtomicLong();
    private final AtomicLong throttledRequests = new AtomicLong();
    private final AtomicLong throttledItems = new AtomicLong();

    private CapacityModel(URI target, long unitsPerSecond) throws IOException {
        this.target = target;
        this.unitsPerSecond = unitsPerSecond;
        this.threads = Executors.newFixedThreadPool(32, r -> {
            Thread t = new Thread(r, "capacity-model");
            t.setDaemon(true);
            return t;
        });
        this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 256);
        server.createContext("/", this::handle);
        server.setExecutor(threads);
        server.start();
    }

    /** A model of {@code unitsPerSecond} write units per table in front of the DynamoDB at {@code endpoint}. */
    public static CapacityModel start(String endpoint, long unitsPerSecond) throws IOException {
        return new CapacityModel(URI.create(endpoint), unitsPerSecond);
    }

    /** Where clients send their requests ({@code target.endpoint}). */
    public String endpoint() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** Write units charged so far, over every table. */
    public long consumedUnits() {
        return consumed.get();
    }

    /** Write requests received (BatchWriteItem, PutItem, UpdateItem, DeleteItem). */
    public long writeRequests() {
        return writeRequests.get();
    }

    /** Write requests answered with a throttling exception or with items handed back. */
    public long throttledRequests() {
        return throttledRequests.get();
    }

    /** Items handed back or refused for want of capacity. */
    public long throttledItems() {
        return throttledItems.get();
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            byte[] body = exchange.getRequestBody().readAllBytes();
            String op = String.valueOf(exchange.getRequestHeaders().getFirst("X-Amz-Target"));
            op = op.startsWith(PREFIX) ? op.substring(PREFIX.length()) : op;
            switch (op) {
                case "BatchWriteItem" -> batchWrite(exchange, body);
                case "PutItem", "DeleteItem", "UpdateItem" -> singleWrite(exchange, body, op);
                default -> forward(exchange, body);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            answer(exchange, 500, error("InternalServerError", "capacity model: " + e));
        }
    }

    private void batchWrite(HttpExchange exchange, byte[] body) throws IOException, InterruptedException {
        writeRequests.incrementAndGet();
        ObjectNode request = (ObjectNode) JSON.readTree(body);
        ObjectNode items = (ObjectNode) request.get("RequestItems");
        ObjectNode refused = JSON.createObjectNode();
        int kept = 0;
        int handedBack = 0;
        String reason = null;
        for (Iterator<Map.Entry<String, JsonNode>> it = items.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            Table table = table(e.getKey());
            ArrayNode keep = JSON.createArrayNode();
            ArrayNode back = JSON.createArrayNode();
            for (JsonNode w : e.getValue()) {
                JsonNode item = w.has("PutRequest")
                        ? w.get("PutRequest").get("Item")
                        : w.get("DeleteRequest").get("Key");
                String why = table.charge(item);
                if (why == null) keep.add(w);
                else {
                    back.add(w);
                    reason = why;
                }
            }
            kept += keep.size();
            handedBack += back.size();
            if (keep.isEmpty()) it.remove();
            else e.setValue(keep);
            if (!back.isEmpty()) refused.set(e.getKey(), back);
        }
        if (handedBack > 0) {
            throttledRequests.incrementAndGet();
            throttledItems.addAndGet(handedBack);
        }
        if (kept == 0) {
            answer(exchange, 400, throttled(reason));
            return;
        }
        Forwarded r = send(exchange, JSON.writeValueAsBytes(request));
        if (r.status() != 200 || refused.isEmpty()) {
            answer(exchange, r);
            return;
        }
        ObjectNode response = (ObjectNode) JSON.readTree(r.body());
        ObjectNode unprocessed = response.has("UnprocessedItems")
                        && response.get("UnprocessedItems").isObject()
                ? (ObjectNode) response.get("UnprocessedItems")
                : response.putObject("UnprocessedItems");
        for (Iterator<Map.Entry<String, JsonNode>> it = refused.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            ArrayNode merged = unprocessed.has(e.getKey())
                    ? (ArrayNode) unprocessed.get(e.getKey())
                    : unprocessed.putArray(e.getKey());
            merged.addAll((ArrayNode) e.getValue());
        }
        Map<String, List<String>> headers = new HashMap<>(r.headers());
        headers.keySet().removeIf(h -> h.equalsIgnoreCase("x-amz-crc32")); // the body changed: the SDK checks it
        answer(exchange, new Forwarded(200, headers, JSON.writeValueAsBytes(response)));
    }

    private void singleWrite(HttpExchange exchange, byte[] body, String op) throws IOException, InterruptedException {
        writeRequests.incrementAndGet();
        JsonNode request = JSON.readTree(body);
        Table table = table(request.get("TableName").asText());
        JsonNode item = op.equals("PutItem") ? request.get("Item") : request.get("Key");
        String why = table.charge(item);
        if (why != null) {
            throttledRequests.incrementAndGet();
            throttledItems.incrementAndGet();
            answer(exchange, 400, throttled(why));
            return;
        }
        answer(exchange, send(exchange, body));
    }

    private void forward(HttpExchange exchange, byte[] body) throws IOException, InterruptedException {
        answer(exchange, send(exchange, body));
    }

    private record Forwarded(int status, Map<String, List<String>> headers, byte[] body) {}

    private Forwarded send(HttpExchange exchange, byte[] body) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(target.resolve(exchange.getRequestURI()))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        exchange.getRequestHeaders().forEach((name, values) -> {
            if (HOP_HEADERS.contains(name.toLowerCase())) return;
            for (String v : values) b.header(name, v);
        });
        HttpResponse<byte[]> r = http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
        return new Forwarded(r.statusCode(), r.headers().map(), r.body());
    }

    private static void answer(HttpExchange exchange, Forwarded r) throws IOException {
        r.headers().forEach((name, values) -> {
            if (HOP_HEADERS.contains(name.toLowerCase()) || name.startsWith(":")) return;
            exchange.getResponseHeaders().put(name, values);
        });
        exchange.sendResponseHeaders(r.status(), r.body().length == 0 ? -1 : r.body().length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(r.body());
        }
    }

    private static void answer(HttpExchange exchange, int status, byte[] body) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", "application/x-amz-json-1.0");
        exchange.sendResponseHeaders(status, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }

    private static byte[] throttled(String reason) {
        ObjectNode e = JSON.createObjectNode();
        e.put("__type", "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException");
        e.put(
                "message",
                "The level of configured provisioned throughput for the table was exceeded. Consider"
                        + " increasing your provisioning level with the UpdateTable API. (capacity model: " + reason
                        + ")");
        ObjectNode r = e.putArray("ThrottlingReasons").addObject();
        r.put("reason", reason);
        return e.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] error(String type, String message) {
        ObjectNode e = JSON.createObjectNode();
        e.put("__type", "com.amazonaws.dynamodb.v20120810#" + type);
        e.put("message", message);
        return e.toString().getBytes(StandardCharsets.UTF_8);
    }

    private Table table(String name) throws IOException, InterruptedException {
        Table t = tables.get(name);
        if (t != null) return t;
        t = describe(name);
        Table raced = tables.putIfAbsent(name, t);
        return raced == null ? t : raced;
    }

    /** The table's partition key and its indexes' keys, read once from DynamoDB Local. */
    private Table describe(String name) throws IOException, InterruptedException {
        byte[] body = JSON.writeValueAsBytes(JSON.createObjectNode().put("TableName", name));
        HttpResponse<byte[]> r = http.send(
                HttpRequest.newBuilder(target)
                        .header("X-Amz-Target", PREFIX + "DescribeTable")
                        .header("Content-Type", "application/x-amz-json-1.0")
                        .header(
                                "Authorization",
                                "AWS4-HMAC-SHA256 Credential=local/20240101/us-east-1/dynamodb/aws4_request,"
                                        + " SignedHeaders=host, Signature=0")
                        .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                        .build(),
                HttpResponse.BodyHandlers.ofByteArray());
        JsonNode t = JSON.readTree(r.body()).path("Table");
        String partitionKey = null;
        for (JsonNode k : t.path("KeySchema"))
            if (k.path("KeyType").asText().equals("HASH"))
                partitionKey = k.path("AttributeName").asText();
        List<String> indexKeys = new ArrayList<>();
        for (JsonNode index : t.path("GlobalSecondaryIndexes"))
            for (JsonNode k : index.path("KeySchema"))
                if (k.path("KeyType").asText().equals("HASH"))
                    indexKeys.add(k.path("AttributeName").asText());
        return new Table(partitionKey, indexKeys, unitsPerSecond);
    }

    /** One table's budget: a bucket for the table and one per partition, each holding one second. */
    private final class Table {
        private final String partitionKey;
        private final List<String> indexKeys;
        private final Bucket table;
        private final Bucket[] partitions;

        Table(String partitionKey, List<String> indexKeys, long units) {
            this.partitionKey = partitionKey;
            this.indexKeys = indexKeys;
            this.table = new Bucket(units);
            int n = (int) Math.max(1, (units + PARTITION_UNITS - 1) / PARTITION_UNITS);
            this.partitions = new Bucket[n];
            for (int i = 0; i < n; i++) partitions[i] = new Bucket(Math.min(units, PARTITION_UNITS));
        }

        /** Charges one write; null when it fits, else DynamoDB's reason for refusing it. */
        synchronized String charge(JsonNode item) {
            long bytes = ItemSize.of(attributes(item));
            long units = ItemSize.tableUnits(bytes);
            for (String k : indexKeys) if (item.has(k)) units += ItemSize.indexUnits(bytes);
            JsonNode key = partitionKey == null ? null : item.get(partitionKey);
            Bucket partition =
                    partitions[Math.floorMod(key == null ? 0 : key.toString().hashCode(), partitions.length)];
            long now = System.nanoTime();
            table.refill(now);
            partition.refill(now);
            if (table.tokens < units) return "TableWriteProvisionedThroughputExceeded";
            if (partition.tokens < units) return "KeyRangeThroughputExceeded";
            table.tokens -= units;
            partition.tokens -= units;
            consumed.addAndGet(units);
            return null;
        }
    }

    /** Tokens refilled at {@code rate} per second, at most one second's worth held. */
    private static final class Bucket {
        final double rate;
        double tokens;
        long at = System.nanoTime();

        Bucket(long rate) {
            this.rate = rate;
            this.tokens = rate;
        }

        void refill(long now) {
            tokens = Math.min(rate, tokens + (now - at) / 1e9 * rate);
            at = now;
        }
    }

    /** DynamoDB's JSON form of an item ({@code {"id": {"S": "x"}}}) as the SDK's values, to size it. */
    static Map<String, AttributeValue> attributes(JsonNode item) {
        Map<String, AttributeValue> out = new HashMap<>();
        item.fields().forEachRemaining(e -> out.put(e.getKey(), value(e.getValue())));
        return out;
    }

    private static AttributeValue value(JsonNode v) {
        String type = v.fieldNames().next();
        JsonNode x = v.get(type);
        return switch (type) {
            case "S" -> AttributeValue.fromS(x.asText());
            case "N" -> AttributeValue.fromN(x.asText());
            case "B" ->
                AttributeValue.fromB(SdkBytes.fromByteArray(Base64.getDecoder().decode(x.asText())));
            case "BOOL" -> AttributeValue.fromBool(x.asBoolean());
            case "NULL" -> AttributeValue.fromNul(true);
            case "M" -> AttributeValue.fromM(attributes(x));
            case "L" -> {
                List<AttributeValue> l = new ArrayList<>();
                for (JsonNode e : x) l.add(value(e));
                yield AttributeValue.fromL(l);
            }
            case "SS" -> {
                List<String> l = new ArrayList<>();
                for (JsonNode e : x) l.add(e.asText());
                yield AttributeValue.fromSs(l);
            }
            case "NS" -> {
                List<String> l = new ArrayList<>();
                for (JsonNode e : x) l.add(e.asText());
                yield AttributeValue.fromNs(l);
            }
            default -> AttributeValue.fromS(x.toString()); // BS and anything newer: sized by its text
        };
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
    }
}
