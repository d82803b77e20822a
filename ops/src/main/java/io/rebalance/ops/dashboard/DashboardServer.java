package io.rebalance.ops.dashboard;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.rebalance.ops.HttpReplies;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves the status page: {@code /} (HTML), its script and style from the jar (no CDN: it works in a closed network)
 * and {@code /api/state}, the JSON the page draws, read at most once a second however many people watch.
 */
public final class DashboardServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(DashboardServer.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long FRESH_MS = 1_000;
    private static final Map<String, String> FILES = Map.of(
            "/", "index.html",
            "/index.html", "index.html",
            "/dashboard.js", "dashboard.js",
            "/dashboard.css", "dashboard.css");

    private final HttpServer server;
    private final ExecutorService executor;
    private final Callable<Map<String, Object>> state;
    private Map<String, Object> cachedState;
    private byte[] cached;
    private long cachedAt;

    private DashboardServer(HttpServer server, ExecutorService executor, Callable<Map<String, Object>> state) {
        this.server = server;
        this.executor = executor;
        this.state = state;
    }

    /** @throws RebalanceException PORT_IN_USE when {@code bind:port} cannot be served on */
    public static DashboardServer start(String bind, int port, Callable<Map<String, Object>> state) {
        HttpServer server;
        try {
            server = HttpServer.create(new InetSocketAddress(bind, port), 16);
        } catch (IOException e) {
            throw new RebalanceException(
                    ErrorCode.PORT_IN_USE,
                    "--port " + port + " on " + bind + " cannot be served on (" + e.getMessage() + "): another"
                            + " process holds it, or it needs privileges; pick another with --port, or 0 for a free one",
                    e);
        }
        ExecutorService executor = Executors.newFixedThreadPool(
                4,
                r -> { // files answer while a state read waits
                    Thread t = new Thread(r, "rebalance-dashboard");
                    t.setDaemon(true);
                    return t;
                });
        DashboardServer d = new DashboardServer(server, executor, state);
        server.setExecutor(executor);
        server.createContext("/api/state", d::state);
        server.createContext("/", d::file);
        server.start();
        return d;
    }

    public int port() {
        return server.getAddress().getPort();
    }

    private void file(HttpExchange x) throws IOException {
        String name = FILES.get(x.getRequestURI().getPath());
        if (name == null) {
            send(x, 404, "text/plain; charset=utf-8", "not found\n".getBytes(StandardCharsets.UTF_8));
            return;
        }
        try (InputStream in = DashboardServer.class.getResourceAsStream(name)) {
            if (name.endsWith(".html")) {
                // drawn with the run's state already in it: a reader without JavaScript, a screenshot taken at once
                // and a slow first request all see the run, not "loading"; the script takes over from there
                String page = FirstRender.fill(new String(in.readAllBytes(), StandardCharsets.UTF_8), snapshot());
                send(x, 200, "text/html; charset=utf-8", page.getBytes(StandardCharsets.UTF_8));
                return;
            }
            String type = name.endsWith(".js") ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8";
            send(x, 200, type, in.readAllBytes());
        }
    }

    /** The run's state, read at most once a second; null while the state store does not answer. */
    private synchronized Map<String, Object> snapshot() {
        long now = System.currentTimeMillis();
        if (now - cachedAt >= FRESH_MS) {
            try {
                cachedState = state.call();
                cached = JSON.writeValueAsBytes(cachedState);
            } catch (Exception e) { // Redis away: the page says so and keeps asking, at most once a second
                log.warn("reading the run's state failed: {}", e.toString());
                cachedState = null;
                cached = null;
            }
            cachedAt = now;
        }
        return cachedState;
    }

    private void state(HttpExchange x) throws IOException {
        byte[] body;
        int status = 200;
        synchronized (this) {
            snapshot();
            body = cached;
        }
        if (body == null) {
            status = 503;
            body = JSON.writeValueAsBytes(Map.of("error", "the run's state store does not answer; retrying"));
        }
        send(x, status, "application/json", body);
    }

    private static void send(HttpExchange x, int status, String type, byte[] body) throws IOException {
        HttpReplies.send(x, status, type, body, PAGE_ONLY);
    }

    /** The page loads nothing from anywhere else. */
    private static final Map<String, String> PAGE_ONLY =
            Map.of("Content-Security-Policy", "default-src 'self'; img-src 'self' data:");

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
