package io.rebalance.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A loopback TCP proxy that can make a service unreachable on demand: {@link #cut()} drops every open connection
 * and refuses new ones until {@link #restore()}; {@link #dropReplyTo} loses one reply. The service itself keeps running and keeps its data, which is
 * what "Redis unavailable for 10 s" means to a client (and a Redis without persistence would lose its data if it
 * were really stopped).
 */
public final class TcpProxy implements AutoCloseable {
    private final ServerSocket server;
    private final String targetHost;
    private final int targetPort;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private volatile boolean cut;
    private volatile boolean closed;
    private final AtomicReference<byte[]> dropReplyMarker = new AtomicReference<>();

    /** One client connection and its upstream: whether the service's next reply on it is to be lost. */
    private static final class Pair {
        volatile boolean loseNextReply;
    }

    public TcpProxy(String targetHost, int targetPort) throws IOException {
        this.targetHost = targetHost;
        this.targetPort = targetPort;
        this.server = new ServerSocket();
        server.bind(new InetSocketAddress("127.0.0.1", 0));
        Thread t = new Thread(this::acceptLoop, "tcp-proxy-" + port());
        t.setDaemon(true);
        t.start();
    }

    public int port() {
        return server.getLocalPort();
    }

    public void cut() {
        cut = true;
        for (Socket s : open) closeQuietly(s);
        open.clear();
    }

    public void restore() {
        cut = false;
    }

    /**
     * A reply that never arrives: the next request that contains {@code marker} reaches the service, which carries
     * it out, but its reply is dropped and the connection closed, as when the network fails right after the request.
     * Once only; other connections and later requests are untouched.
     */
    public void dropReplyTo(String marker) {
        dropReplyMarker.set(marker.getBytes(StandardCharsets.UTF_8));
    }

    /** Whether an armed {@link #dropReplyTo} is still waiting for its request. */
    public boolean replyDropPending() {
        return dropReplyMarker.get() != null;
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket client = server.accept();
                if (cut) {
                    closeQuietly(client);
                    continue;
                }
                Socket upstream = new Socket(targetHost, targetPort);
                open.add(client);
                open.add(upstream);
                Pair pair = new Pair();
                pump(client, upstream, pair, true);
                pump(upstream, client, pair, false);
            } catch (IOException e) {
                if (closed) return;
            }
        }
    }

    private void pump(Socket from, Socket to, Pair pair, boolean requests) {
        Thread t = new Thread(
                () -> {
                    byte[] buf = new byte[16 * 1024];
                    try (InputStream in = from.getInputStream();
                            OutputStream out = to.getOutputStream()) {
                        int n;
                        while ((n = in.read(buf)) >= 0) {
                            if (requests) {
                                byte[] marker = dropReplyMarker.get();
                                if (marker != null
                                        && contains(buf, n, marker)
                                        && dropReplyMarker.compareAndSet(marker, null)) {
                                    pair.loseNextReply = true; // before the request goes on, so before its reply
                                }
                            } else if (pair.loseNextReply) {
                                return; // the reply is dropped; the finally below closes the connection
                            }
                            out.write(buf, 0, n);
                            out.flush();
                        }
                    } catch (IOException e) {
                        // connection dropped, by cut() or by a peer
                    } finally {
                        closeQuietly(from);
                        closeQuietly(to);
                        open.remove(from);
                        open.remove(to);
                    }
                },
                "tcp-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private static boolean contains(byte[] buf, int n, byte[] marker) {
        outer:
        for (int i = 0; i + marker.length <= n; i++) {
            for (int j = 0; j < marker.length; j++) {
                if (buf[i + j] != marker[j]) continue outer;
            }
            return true;
        }
        return false;
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        cut();
        server.close();
    }
}
