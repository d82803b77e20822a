package io.rebalance.bench;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.SocketFactory;

/**
 * Counts the bytes Postgres sends to this JVM: named in the JDBC URL ({@code socketFactory=...}), pgjdbc opens its
 * sockets through it, so the count is exactly what crossed the network, protocol overhead included.
 */
public final class CountingSocketFactory extends SocketFactory {
    public static final AtomicLong RECEIVED = new AtomicLong();

    @Override
    public Socket createSocket() {
        return new Socket() {
            @Override
            public InputStream getInputStream() throws IOException {
                return new FilterInputStream(super.getInputStream()) {
                    @Override
                    public int read() throws IOException {
                        int b = super.read();
                        if (b >= 0) RECEIVED.incrementAndGet();
                        return b;
                    }

                    @Override
                    public int read(byte[] buf, int off, int len) throws IOException {
                        int n = super.read(buf, off, len);
                        if (n > 0) RECEIVED.addAndGet(n);
                        return n;
                    }
                };
            }
        };
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
        throw new UnsupportedOperationException("pgjdbc creates unconnected sockets");
    }

    @Override
    public Socket createSocket(String host, int port, InetAddress local, int localPort) {
        throw new UnsupportedOperationException("pgjdbc creates unconnected sockets");
    }

    @Override
    public Socket createSocket(InetAddress host, int port) {
        throw new UnsupportedOperationException("pgjdbc creates unconnected sockets");
    }

    @Override
    public Socket createSocket(InetAddress address, int port, InetAddress local, int localPort) {
        throw new UnsupportedOperationException("pgjdbc creates unconnected sockets");
    }
}
