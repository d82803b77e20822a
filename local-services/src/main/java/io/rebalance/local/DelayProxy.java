package io.rebalance.local;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A slower DynamoDB: an HTTP proxy in front of DynamoDB Local that passes every call (DynamoDB's and its Streams')
 * on a fixed time after it arrived, so a benchmark measures what a target farther away than this machine costs. The
 * calls wait on a schedule, not on a thread each.
 */
public final class DelayProxy implements AutoCloseable {
    private final HttpServer server;
    private final ScheduledExecutorService schedule = Executors.newScheduledThreadPool(2, r -> {
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
        server.setExecutor(schedule);
        server.start();
    }

    /** A proxy adding {@code delayMillis} to every call to the DynamoDB at {@code endpoint}. */
    public static DelayProxy start(String endpoint, long delayMillis) throws IOException {
        return new DelayProxy(URI.create(endpoint), delayMillis);
    }

    public String endpoint() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** Reads the call, then passes it on after the delay; the exchange is answered and closed when the reply comes. */
    private void handle(HttpExchange exchange) throws IOException {
        byte[] body = exchange.getRequestBody().readAllBytes();
        schedule.schedule(
                () -> http.sendAsync(
                                Forwarded.request(target, exchange, body, null),
                                HttpResponse.BodyHandlers.ofByteArray())
                        .whenComplete((r, failed) -> {
                            try (exchange) {
                                if (r != null) Forwarded.of(r).answer(exchange);
                                else exchange.sendResponseHeaders(502, -1);
                            } catch (IOException e) {
                                // the client went away: nothing to answer
                            }
                        }),
                delayMillis,
                TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
        server.stop(0);
        schedule.shutdownNow();
    }
}
