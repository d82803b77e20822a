package io.rebalance.ops.watch;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.rebalance.ops.HttpReplies;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Serves {@code /metrics} (the Prometheus text format), {@code /health/live} and {@code /health/ready} on one port
 * with the JDK's HTTP server: no framework for three read-only paths (docs/adr/0011).
 */
public final class MetricsEndpoint implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

    private final HttpServer server;
    private final ExecutorService executor;

    private MetricsEndpoint(HttpServer server, ExecutorService executor) {
        this.server = server;
        this.executor = executor;
    }

    /**
     * Binds every interface on {@code port} (0: a free one) and starts serving.
     *
     * @throws RebalanceException PORT_IN_USE when the port is taken or not allowed
     */
    public static MetricsEndpoint start(int port, String key, PrometheusMeterRegistry registry, Health health) {
        HttpServer server;
        try {
            server = HttpServer.create(new InetSocketAddress(port), 16);
        } catch (BindException e) {
            throw new RebalanceException(
                    ErrorCode.PORT_IN_USE,
                    key + "=" + port + " cannot be served on (" + e.getMessage() + "): another process holds it, or"
                            + " it needs privileges; pick another port, or 0 for a free one",
                    e);
        } catch (IOException e) {
            throw new RebalanceException(
                    ErrorCode.PORT_IN_USE, key + "=" + port + " cannot be served on: " + e.getMessage(), e);
        }
        ExecutorService executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "rebalance-metrics");
            t.setDaemon(true); // a scrape in flight never keeps the process from exiting
            return t;
        });
        server.setExecutor(executor);
        server.createContext("/metrics", x -> send(x, 200, PROMETHEUS_TEXT, registry.scrape()));
        server.createContext("/health/live", x -> json(x, health.live()));
        server.createContext("/health/ready", x -> json(x, health.ready()));
        server.createContext(
                "/",
                x -> send(
                        x,
                        404,
                        "text/plain; charset=utf-8",
                        "not found: /metrics, /health/live," + " /health/ready\n"));
        server.start();
        return new MetricsEndpoint(server, executor);
    }

    /** The port it serves on (the one picked when asked for 0). */
    public int port() {
        return server.getAddress().getPort();
    }

    private static void json(HttpExchange x, Health.Answer a) throws IOException {
        send(x, a.status(), "application/json", JSON.writeValueAsString(a.body()) + "\n");
    }

    private static void send(HttpExchange x, int status, String type, String body) throws IOException {
        HttpReplies.send(x, status, type, body.getBytes(StandardCharsets.UTF_8), Map.of());
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
