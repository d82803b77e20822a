package io.rebalance.ops;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Map;

/**
 * The one way the metrics endpoint and the dashboard answer a request on the JDK's HTTP server: never cached, a HEAD
 * without its body, the exchange closed whatever happens.
 */
public final class HttpReplies {
    private HttpReplies() {}

    /** Sends {@code body} as {@code type} with {@code status} and any {@code headers} beside the usual ones. */
    public static void send(HttpExchange x, int status, String type, byte[] body, Map<String, String> headers)
            throws IOException {
        try (x) {
            x.getResponseHeaders().set("Content-Type", type);
            x.getResponseHeaders().set("Cache-Control", "no-store");
            headers.forEach(x.getResponseHeaders()::set);
            boolean head = "HEAD".equals(x.getRequestMethod());
            x.sendResponseHeaders(status, head ? -1 : body.length);
            if (!head) {
                try (OutputStream out = x.getResponseBody()) {
                    out.write(body);
                }
            }
        }
    }
}
