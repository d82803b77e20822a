package io.rebalance.local;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A call passed on to DynamoDB Local and its answer, for the proxies in front of it ({@link CapacityModel},
 * {@link DelayProxy}): the request as the client sent it, hop-by-hop headers left out; the answer sent back so.
 */
record Forwarded(int status, Map<String, List<String>> headers, byte[] body) {
    private static final String PREFIX = "DynamoDB_20120810.";
    private static final Set<String> HOP_HEADERS =
            Set.of("host", "content-length", "connection", "transfer-encoding", "expect");

    /** The client's request to {@code target}, as another operation when {@code op} names one (else null). */
    static HttpRequest request(URI target, HttpExchange exchange, byte[] body, String op) {
        HttpRequest.Builder b = HttpRequest.newBuilder(target.resolve(exchange.getRequestURI()))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        exchange.getRequestHeaders().forEach((name, values) -> {
            if (HOP_HEADERS.contains(name.toLowerCase())) return;
            if (op != null && name.equalsIgnoreCase("X-Amz-Target")) return;
            for (String v : values) b.header(name, v);
        });
        if (op != null) b.header("X-Amz-Target", PREFIX + op);
        return b.build();
    }

    static Forwarded of(HttpResponse<byte[]> r) {
        return new Forwarded(r.statusCode(), r.headers().map(), r.body());
    }

    /** Sends this answer to the client. */
    void answer(HttpExchange exchange) throws IOException {
        headers.forEach((name, values) -> {
            if (HOP_HEADERS.contains(name.toLowerCase()) || name.startsWith(":")) return;
            exchange.getResponseHeaders().put(name, values);
        });
        exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }
}
