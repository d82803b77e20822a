package io.rebalance.local;

import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.net.ServerSocket;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * Amazon's DynamoDB Local, in this process, on a loopback port. {@code -sharedDb} so that every client sees one
 * database whatever credentials and region it signs with (several rebalance processes share one server);
 * {@code -inMemory} because it is about 13x faster than on disk here and the data is a copy anyway.
 *
 * <p>After {@link #close()} DynamoDB Local leaves a non-daemon thread behind for minutes: a command that used it
 * must end with {@code System.exit} (STACK.md).
 */
public final class DynamoDbLocalServer implements AutoCloseable {
    private final DynamoDBProxyServer server;
    private final int port;

    private DynamoDbLocalServer(DynamoDBProxyServer server, int port) {
        this.server = server;
        this.port = port;
    }

    /** Held so the level set on it is not lost when the logger would be garbage collected. */
    private static final Logger SQLITE = Logger.getLogger("com.almworks.sqlite4java");

    /** @param port a port to listen on, or 0 for any free one */
    public static DynamoDbLocalServer start(int port) {
        int p = port == 0 ? freePort() : port;
        SQLITE.setLevel(Level.SEVERE); // "unknown jar version" warnings at every start
        PrintStream stdout = System.out;
        try {
            // DynamoDB Local prints its configuration banner to stdout, where a command's own output belongs.
            System.setOut(new PrintStream(OutputStream.nullOutputStream()));
            DynamoDBProxyServer server = ServerRunner.createServerFromCommandLineArgs(
                    new String[] {"-inMemory", "-sharedDb", "-port", Integer.toString(p), "-disableTelemetry"});
            loopbackOnly(server);
            server.start();
            SQLITE.setLevel(Level.SEVERE); // again: DynamoDB Local sets its own level while starting
            return new DynamoDbLocalServer(server, p);
        } catch (Exception e) {
            throw new IllegalStateException(
                    "DynamoDB Local could not start on port " + p + ": " + e.getMessage()
                            + (port == 0 ? "" : "; choose another port with --port"),
                    e);
        } finally {
            System.setOut(stdout); // the banner is printed while it starts; what the process prints after is its own
        }
    }

    /**
     * DynamoDB Local has no option for the address and listens on every interface: anyone who can reach the machine
     * could read and write the copy, without credentials. Its Jetty server's connector is bound to loopback before it
     * starts (a private field: DynamoDBLocalServerTest fails if a release renames it).
     */
    private static void loopbackOnly(DynamoDBProxyServer proxy) throws ReflectiveOperationException {
        Field field = DynamoDBProxyServer.class.getDeclaredField("server");
        field.setAccessible(true);
        Server jetty = (Server) field.get(proxy);
        for (Connector c : jetty.getConnectors()) {
            if (c instanceof ServerConnector sc) sc.setHost("127.0.0.1");
        }
    }

    public int port() {
        return port;
    }

    public String endpoint() {
        return "http://127.0.0.1:" + port;
    }

    @Override
    public void close() {
        try {
            server.stop();
        } catch (Exception e) {
            // Stopping is best effort at shutdown; the process exits right after.
        }
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException("no free local port", e);
        }
    }
}
