package io.rebalance.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.ops.Connections;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code rebalance rate N}: changes the run's rows-per-second limit; every process picks it up within a second. */
@Command(
        name = "rate",
        description = "Set the run's rate limit in rows/s for all processes together (0 = none), while it runs.",
        footerHeading = "%nExamples:%n",
        footer = {"  rebalance rate -c migration.yaml 2000", "  rebalance rate -c migration.yaml 0   # no limit"})
final class RateCommand implements Callable<Integer> {
    @Mixin
    ConfigOptions options;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Parameters(
            index = "0",
            paramLabel = "ROWS_PER_SECOND",
            description = "Rows per second for all processes together; 0 removes the limit.")
    long rowsPerSecond;

    @Option(names = "--json", description = "Print the result as JSON: {\"prefix\": ..., \"rateLimit\": N}.")
    boolean json;

    @Override
    public Integer call() throws Exception {
        if (rowsPerSecond < 0) {
            throw new RebalanceException(
                    ErrorCode.CONFIG_INVALID,
                    "rate " + rowsPerSecond + " is negative; give rows per second, or 0 for no limit");
        }
        MigrationConfig config = options.load();
        try (Connections c = new Connections(config, 2)) {
            c.runState().setRateLimit(rowsPerSecond);
            if (json) {
                Map<String, Object> result = new LinkedHashMap<>();
                result.put("prefix", config.redis().keyspace().prefix());
                result.put("rateLimit", rowsPerSecond);
                spec.commandLine().getOut().println(new ObjectMapper().writeValueAsString(result));
                return 0;
            }
            spec.commandLine()
                    .getOut()
                    .println("run " + config.redis().keyspace().prefix() + ": rate limit "
                            + (rowsPerSecond == 0 ? "removed" : rowsPerSecond + " rows/s")
                            + "; processes apply it within a second");
            return 0;
        }
    }
}
