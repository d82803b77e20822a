package io.rebalance.cli;

import java.util.Map;
import picocli.CommandLine.Option;

/** {@code --metrics-port}: the long-running commands' Prometheus metrics and health endpoint (docs/operations.md). */
final class MetricsOption {
    @Option(
            names = "--metrics-port",
            paramLabel = "PORT",
            description = "Serve Prometheus metrics on http://0.0.0.0:PORT/metrics and health on /health/live and"
                    + " /health/ready while the command runs; 0 picks a free port and logs it. Config metrics.port,"
                    + " env REBALANCE_METRICS_PORT (default: none).")
    Integer port;

    /** Adds the flag's value, when given, to a command's config overrides. */
    Map<String, String> into(Map<String, String> overrides) {
        if (port != null) overrides.put("metrics.port", port.toString());
        return overrides;
    }
}
