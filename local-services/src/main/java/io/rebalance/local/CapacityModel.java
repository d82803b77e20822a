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
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

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
 * {@code TableWriteProvisionedThroughputExceeded} or {@code KeyRangeThroughputExceeded}. A write that asks for its
 * {@code ConsumedCapacity} is told the units charged. Warm throughput, which DynamoDB Local ignores, is kept and
 * described per table. Reads pass untouched.
 */
public final class CapacityModel implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PREFIX = "DynamoDB_20120810.";
    private static final long PARTITION_UNITS = 1_000;

    private final HttpServer server;
    private final ExecutorService threads;
    private final HttpClient http = HttpClient.newHttpClient();
    private final URI target;
    private final long unitsPerSecond;
    private final Map<String, Table> tables = new ConcurrentHashMap<>();
    private final Map<String, Long> warmWrites = new ConcurrentHashMap<>();

    private final AtomicLong consumed = new AtomicLong();
    private final AtomicLong writeRequests = new AtomicLong();
    private final AtomicLong throttledRequests = new AtomicLong();
    private final AtomicLong throttledItems = new AtomicLong();
    private final AtomicLong firstCharge = new AtomicLong();
    private final AtomicLong lastCharge = new AtomicLong();

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

    /** The model's counts at one moment. */
    public record Counts(long consumedUnits, long writeRequests, long throttledRequests, long throttledItems) {}

    public Counts counts() {
        return new Counts(consumedUnits(), writeRequests(), throttledRequests(), throttledItems());
    }

    /** Seconds from the first write charged to the last: how long writes were coming in. */
    public double writingSeconds() {
        return (lastCharge.get() - firstCharge.get()) / 1e9;
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
                case "UpdateTable" -> updateTable(exchange, body);
                case "DescribeTable" -> describeTable(exchange, body);
                default -> forward(exchange, body);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            answer(exchange, 500, DynamoJson.error("InternalServerError", "capacity model: " + e));
        }
    }

    private void batchWrite(HttpExchange exchange, byte[] body) throws IOException, InterruptedException {
        writeRequests.incrementAndGet();
        ObjectNode request = (ObjectNode) JSON.readTree(body);
        ObjectNode items = (ObjectNode) request.get("RequestItems");
        ObjectNode refused = JSON.createObjectNode();
        Map<String, Long> charged = new HashMap<>();
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
                Charge c = table.charge(item);
                if (c.refused() == null) {
                    keep.add(w);
                    charged.merge(e.getKey(), c.units(), Long::sum);
                } else {
                    back.add(w);
                    reason = c.refused();
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
            answer(exchange, 400, DynamoJson.throttled(reason));
            return;
        }
        Forwarded r = send(exchange, JSON.writeValueAsBytes(request));
        boolean metered = request.has("ReturnConsumedCapacity")
                && !request.get("ReturnConsumedCapacity").asText().equals("NONE");
        if (r.status() != 200 || (refused.isEmpty() && !metered)) {
            answer(exchange, r);
            return;
        }
        ObjectNode response = (ObjectNode) JSON.readTree(r.body());
        if (metered) { // what the model charged, as DynamoDB reports what it bills
            ArrayNode consumedCapacity = response.putArray("ConsumedCapacity");
            charged.forEach((name, units) ->
                    consumedCapacity.addObject().put("TableName", name).put("CapacityUnits", (double) units));
        }
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
        Charge c = table.charge(item);
        if (c.refused() != null) {
            throttledRequests.incrementAndGet();
            throttledItems.incrementAndGet();
            answer(exchange, 400, DynamoJson.throttled(c.refused()));
            return;
        }
        answer(exchange, send(exchange, body));
    }

    /**
     * Warm throughput, which DynamoDB Local ignores: the model keeps it per table and reports it in DescribeTable.
     * An UpdateTable that sets only it is answered here; other changes go on to DynamoDB Local without it.
     */
    private void updateTable(HttpExchange exchange, byte[] body) throws IOException, InterruptedException {
        ObjectNode request = (ObjectNode) JSON.readTree(body);
        JsonNode warm = request.remove("WarmThroughput");
        String name = request.path("TableName").asText();
        if (warm != null && warm.has("WriteUnitsPerSecond"))
            warmWrites.put(name, warm.get("WriteUnitsPerSecond").asLong());
        if (warm == null || request.size() > 1) {
            answer(exchange, send(exchange, JSON.writeValueAsBytes(request)));
            return;
        }
        byte[] describe = JSON.writeValueAsBytes(JSON.createObjectNode().put("TableName", name));
        Forwarded r = described(send(exchange, describe, "DescribeTable"), name, "Table");
        if (r.status() == 200) {
            ObjectNode d = (ObjectNode) JSON.readTree(r.body());
            ObjectNode out = JSON.createObjectNode();
            out.set("TableDescription", d.get("Table"));
            r = new Forwarded(200, r.headers(), JSON.writeValueAsBytes(out));
        }
        answer(exchange, r);
    }

    private void describeTable(HttpExchange exchange, byte[] body) throws IOException, InterruptedException {
        String name = JSON.readTree(body).path("TableName").asText();
        answer(exchange, described(send(exchange, body), name, "Table"));
    }

    /** The description with the warm throughput the model keeps for the table, if any. */
    private Forwarded described(Forwarded r, String name, String field) throws IOException {
        Long warm = warmWrites.get(name);
        if (r.status() != 200 || warm == null) return r;
        ObjectNode d = (ObjectNode) JSON.readTree(r.body());
        ObjectNode w = ((ObjectNode) d.get(field)).putObject("WarmThroughput");
        w.put("WriteUnitsPerSecond", warm).put("ReadUnitsPerSecond", 12_000).put("Status", "ACTIVE");
        Map<String, List<String>> headers = new HashMap<>(r.headers());
        headers.keySet().removeIf(h -> h.equalsIgnoreCase("x-amz-crc32")); // the body changed: the SDK checks it
        return new Forwarded(200, headers, JSON.writeValueAsBytes(d));
    }

    /** The warm throughput set on {@code table} through the model (write units/s), or 0. */
    public long warmWriteUnits(String table) {
        return warmWrites.getOrDefault(table, 0L);
    }

    private void forward(HttpExchange exchange, byte[] body) throws IOException, InterruptedException {
        answer(exchange, send(exchange, body));
    }

    private Forwarded send(HttpExchange exchange, byte[] body) throws IOException, InterruptedException {
        return send(exchange, body, null);
    }

    /** Forwards the request, as another operation when {@code op} names one. */
    private Forwarded send(HttpExchange exchange, byte[] body, String op) throws IOException, InterruptedException {
        return Forwarded.of(
                http.send(Forwarded.request(target, exchange, body, op), HttpResponse.BodyHandlers.ofByteArray()));
    }

    private static void answer(HttpExchange exchange, Forwarded r) throws IOException {
        r.answer(exchange);
    }

    private static void answer(HttpExchange exchange, int status, byte[] body) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", "application/x-amz-json-1.0");
        exchange.sendResponseHeaders(status, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
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
        private final TokenBucket table;
        private final TokenBucket[] partitions;

        Table(String partitionKey, List<String> indexKeys, long units) {
            this.partitionKey = partitionKey;
            this.indexKeys = indexKeys;
            this.table = new TokenBucket(units);
            int n = (int) Math.max(1, (units + PARTITION_UNITS - 1) / PARTITION_UNITS);
            this.partitions = new TokenBucket[n];
            for (int i = 0; i < n; i++) partitions[i] = new TokenBucket(Math.min(units, PARTITION_UNITS));
        }

        /** Charges one write: the units it cost, or DynamoDB's reason for refusing it. */
        synchronized Charge charge(JsonNode item) {
            long bytes = ItemSize.of(DynamoJson.attributes(item));
            long units = ItemSize.tableUnits(bytes);
            for (String k : indexKeys) if (item.has(k)) units += ItemSize.indexUnits(bytes);
            JsonNode key = partitionKey == null ? null : item.get(partitionKey);
            TokenBucket partition =
                    partitions[Math.floorMod(key == null ? 0 : key.toString().hashCode(), partitions.length)];
            long now = System.nanoTime();
            table.refill(now);
            partition.refill(now);
            if (table.tokens < units) return new Charge(0, "TableWriteProvisionedThroughputExceeded");
            if (partition.tokens < units) return new Charge(0, "KeyRangeThroughputExceeded");
            table.tokens -= units;
            partition.tokens -= units;
            consumed.addAndGet(units);
            firstCharge.compareAndSet(0, now);
            lastCharge.set(now);
            return new Charge(units, null);
        }
    }

    /** What one write was charged: its units, or the reason it was refused (then nothing was charged). */
    private record Charge(long units, String refused) {}

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
    }
}
