package io.rebalance.local;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A slower DynamoDB: an HTTP proxy in front of DynamoDB Local that holds every call (DynamoDB's and its Streams')
 * for a fixed time before passing it on, so a benchmark measures what a target farther away than this machine costs.
 */
public final class DelayProxy implements AutoCloseable {
    private static final Set<String> HOP_HEADERS =
            Set.of("host", "content-length", "connection", "transfer-encoding", "expect");

    private final HttpServer server;
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "delay-proxy");
        t.setDaemon(true);
        return t;
    });
    private final HttpClient http = HttpClient.newHttpClient();
    private final URI target;
    private final long delayMillis;

    private DelayProxy(URI target, long delayMillis) throws IOException {
        this.target = target;
        this.delayMillis = delayMillis;
        this.server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 512);
        server.createContext("/", this::handle);
        server.setExecutor(threads);
        server.start();
    }

    /** A proxy adding {@code delayMillis} to every call to the DynamoDB at {@code endpoint}. */
    public static DelayProxy start(String endpoint, long delayMillis) throws IOException {
        return new DelayProxy(URI.create(endpoint), delayMillis);
    }

    public String endpoint() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            byte[] body = exchange.getRequestBody().readAllBytes();
            Thread.sleep(delayMillis); // the point of the proxy: each call takes this much longer
            HttpRequest.Builder b = HttpRequest.newBuilder(target.resolve(exchange.getRequestURI()))
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body));
            exchange.getRequestHeaders().forEach((name, values) -> {
                if (HOP_HEADERS.contains(name.toLowerCase())) return;
                for (String v : values) b.header(name, v);
            });
            HttpResponse<byte[]> r = http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
            r.headers().map().forEach((name, values) -> {
                if (HOP_HEADERS.contains(name.toLowerCase()) || name.startsWith(":")) return;
                exchange.getResponseHeaders().put(name, values);
            });
            exchange.sendResponseHeaders(r.statusCode(), r.body().length == 0 ? -1 : r.body().length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(r.body());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
    }
}
