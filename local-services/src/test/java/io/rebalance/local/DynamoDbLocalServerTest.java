package io.rebalance.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/**
 * {@code rebalance-demo dynamodb-local} said it served on 127.0.0.1 and listened on every interface: anyone reaching
 * the machine could read and write the copy without credentials. The kernel's socket table says where it listens.
 */
class DynamoDbLocalServerTest {
    @Test
    void itListensOnLoopbackOnly() throws Exception {
        try (DynamoDbLocalServer server = DynamoDbLocalServer.start(0)) {
            String port = String.format(Locale.ROOT, ":%04X", server.port());
            List<String> listening = listening(Path.of("/proc/net/tcp"), port);
            listening.addAll(listening(Path.of("/proc/net/tcp6"), port));
            // 127.0.0.1, or the same as an IPv4-mapped IPv6 address; every interface is 0.0.0.0 or ::
            assertThat(listening)
                    .as("local addresses listening on the port")
                    .isNotEmpty()
                    .allMatch(a -> a.equals("0100007F" + port) || a.equals("0000000000000000FFFF00000100007F" + port));
        }
    }

    /**
     * Its banner is kept off stdout while it starts, and stdout is the process's again after: it stayed a null stream,
     * so everything printed to System.out after an in-process start (a test's figures among them) was lost.
     */
    @Test
    void stdoutIsTheProcesssAgainOnceItStarted() {
        java.io.PrintStream before = System.out;
        try (DynamoDbLocalServer server = DynamoDbLocalServer.start(0)) {
            assertThat(System.out).isSameAs(before);
        }
    }

    /** Local addresses (hex, as the kernel writes them) in LISTEN state (0A) on {@code port}. */
    private static List<String> listening(Path table, String port) throws Exception {
        if (!Files.exists(table)) return new java.util.ArrayList<>();
        return Files.readAllLines(table).stream()
                .skip(1)
                .map(line -> line.trim().split("\\s+"))
                .filter(f -> f[1].endsWith(port) && f[3].equals("0A"))
                .map(f -> f[1])
                .collect(java.util.stream.Collectors.toCollection(java.util.ArrayList::new));
    }
}
