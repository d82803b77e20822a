package io.rebalance.local;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A slower DynamoDB: an HTTP proxy in front of DynamoDB Local that passes every call (DynamoDB's and its Streams')
 * on a fixed time after it arrived, so a benchmark measures what a target farther away than this machine costs. Each
 * call holds a thread while it waits and while DynamoDB Local answers, as a client's call to a far target does: a
 * schedule that answered from the HTTP client's own threads left calls unanswered for 30 s under a cutover bench's
 * load (500 writes/s on 40 threads, and a scan of 200,000 items).
 */
public final class DelayProxy implements AutoCloseable {
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

    /** Reads the call, waits, passes it on and answers with what came back. */
    private void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            byte[] body = exchange.getRequestBody().readAllBytes();
            Thread.sleep(delayMillis); // the point of the proxy: each call takes this much longer
            Forwarded.of(http.send(
                            Forwarded.request(target, exchange, body, null), HttpResponse.BodyHandlers.ofByteArray()))
                    .answer(exchange);
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
