package io.rebalance.demo;

import io.rebalance.local.DynamoDbLocalServer;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code rebalance-demo dynamodb-local}: serves Amazon's DynamoDB Local (in memory, shared database) on a port, so several
 * rebalance processes can copy into one DynamoDB without AWS. Runs until stopped.
 */
@Command(
        name = "dynamodb-local",
        description = "Serve DynamoDB Local (in memory) on a port for several rebalance processes.",
        footerHeading = "%nExamples:%n",
        footer = {
            "  rebalance-demo dynamodb-local --port 8000 &",
            "  rebalance copy --set target.endpoint=http://127.0.0.1:8000"
        })
final class DynamoDbLocalCommand implements Callable<Integer> {
    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--port", paramLabel = "PORT", description = "Port to listen on (default ${DEFAULT-VALUE}).")
    int port = 8000;

    @Override
    public Integer call() throws InterruptedException {
        DynamoDbLocalServer server = DynamoDbLocalServer.start(port);
        CountDownLatch stop = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stop.countDown();
        }));
        spec.commandLine()
                .getOut()
                .println("DynamoDB Local serves " + server.endpoint() + " (in memory; data ends with this"
                        + " process). Use --set target.endpoint=" + server.endpoint() + ". Ctrl-C stops it.");
        stop.await();
        return 0;
    }
}
