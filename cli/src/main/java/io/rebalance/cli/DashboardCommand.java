package io.rebalance.cli;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.ops.Connections;
import io.rebalance.ops.dashboard.DashboardServer;
import io.rebalance.ops.dashboard.DashboardState;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code rebalance dashboard}: serves one page over the run, refreshing itself, until stopped. It reads the run's
 * state store only.
 */
@Command(
        name = "dashboard",
        description = "Serve a status page over the run until stopped: every slot by state, rows/s and ETA, the tail's"
                + " lag and retained WAL over the last hour, the route, lease holders, refused rows and the last"
                + " cutover's steps. Reads the run's state store only (Redis, or the Postgres coordinator's schema),"
                + " never the source table nor DynamoDB.",
        footerHeading = "%nExamples:%n",
        footer = {
            "  rebalance dashboard -c migration.yaml                      # http://127.0.0.1:8080/",
            "  rebalance dashboard -c migration.yaml --port 9000 --bind 0.0.0.0   # in a pod"
        })
final class DashboardCommand implements Callable<Integer> {
    @Mixin
    ConfigOptions options;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(
            names = "--port",
            paramLabel = "PORT",
            defaultValue = "8080",
            description = "The port to serve the page on, 0 for a free one (default ${DEFAULT-VALUE}).")
    int port;

    @Option(
            names = "--bind",
            paramLabel = "ADDRESS",
            defaultValue = "127.0.0.1",
            description = "The address to listen on (default ${DEFAULT-VALUE}, this machine only; 0.0.0.0 for every"
                    + " interface, as in a pod).")
    String bind;

    @Override
    public Integer call() throws Exception {
        MigrationConfig config = options.load();
        if (port < 0 || port > 65535) {
            throw new RebalanceException(
                    ErrorCode.CONFIG_INVALID,
                    "--port " + port + " is not valid; use a TCP port 1-65535, or 0 for a free one");
        }
        PrintWriter out = spec.commandLine().getOut();
        CountDownLatch stopped = new CountDownLatch(1);
        try (Connections c = new Connections(config, 4);
                DashboardServer server = DashboardServer.start(bind, port, () -> DashboardState.read(config, c))) {
            Thread hook = new Thread(stopped::countDown, "rebalance-dashboard-shutdown");
            Runtime.getRuntime().addShutdownHook(hook);
            String host = bind.equals("0.0.0.0") ? "127.0.0.1" : bind;
            out.println("dashboard of " + c.coordinator().where() + " on http://" + host + ":" + server.port()
                    + "/ ; Ctrl-C stops it");
            out.flush();
            try {
                stopped.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                } catch (IllegalStateException shuttingDown) {
                    // the hook is running: the JVM exits anyway
                }
            }
        }
        return 0;
    }
}
