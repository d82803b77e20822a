package io.rebalance.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.mover.WriteUnitBudget;
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

/**
 * {@code rebalance rate N}: changes the run's rows-per-second limit, and with {@code --units} its write-unit budget;
 * every process picks them up within a second.
 */
@Command(
        name = "rate",
        description = "Set the run's rate limit in rows/s for all processes together (0 = none), or with --units its"
                + " DynamoDB write units/s (0 = none), while it runs.",
        footerHeading = "%nExamples:%n",
        footer = {
            "  rebalance rate -c migration.yaml 2000",
            "  rebalance rate -c migration.yaml 0   # no limit",
            "  rebalance rate -c migration.yaml --units 8000   # write units/s; the rows/s limit stays"
        })
final class RateCommand implements Callable<Integer> {
    @Mixin
    ConfigOptions options;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Parameters(
            index = "0",
            arity = "0..1",
            paramLabel = "ROWS_PER_SECOND",
            description = "Rows per second for all processes together; 0 removes the limit. May be left out with"
                    + " --units.")
    Long rowsPerSecond;

    @Option(
            names = "--units",
            paramLabel = "N",
            description = "DynamoDB write units per second for all processes together (the budget's ceiling, as"
                    + " mover.writeUnits; throttling lowers the rate below it); 0 removes the budget.")
    Long writeUnits;

    @Option(
            names = "--json",
            description = "Print the result as JSON: {\"prefix\": ..., \"rateLimit\": N, \"writeUnits\": N}, the"
                    + " limits now in force.")
    boolean json;

    @Override
    public Integer call() throws Exception {
        if (rowsPerSecond == null && writeUnits == null) {
            throw new RebalanceException(
                    ErrorCode.CONFIG_INVALID,
                    "rate needs ROWS_PER_SECOND, --units N or both; `rebalance rate --help` shows how");
        }
        if (rowsPerSecond != null && rowsPerSecond < 0) {
            throw new RebalanceException(
                    ErrorCode.CONFIG_INVALID,
                    "rate " + rowsPerSecond + " is negative; give rows per second, or 0 for no limit");
        }
        if (writeUnits != null && writeUnits < 0) {
            throw new RebalanceException(
                    ErrorCode.CONFIG_INVALID,
                    "--units " + writeUnits + " is negative; give write units per second, or 0 for no budget");
        }
        MigrationConfig config = options.load();
        try (Connections c = new Connections(config, 2)) {
            if (rowsPerSecond != null) c.runState().setRateLimit(rowsPerSecond);
            WriteUnitBudget budget = c.coordinator().budget();
            long units = writeUnits != null
                    ? budget.setCeiling(writeUnits).ceiling()
                    : budget.read().ceiling();
            long rows = c.runState().rateLimit();
            if (json) {
                Map<String, Object> result = new LinkedHashMap<>();
                result.put("prefix", c.runState().name());
                result.put("rateLimit", rows);
                result.put("writeUnits", units);
                spec.commandLine().getOut().println(new ObjectMapper().writeValueAsString(result));
                return 0;
            }
            String prefix = c.runState().name();
            if (rowsPerSecond != null)
                spec.commandLine()
                        .getOut()
                        .println("run " + prefix + ": rate limit "
                                + (rows == 0 ? "removed" : rows + " rows/s")
                                + "; processes apply it within a second");
            if (writeUnits != null)
                spec.commandLine()
                        .getOut()
                        .println("run " + prefix + ": write-unit budget "
                                + (units == 0 ? "removed" : units + " write units/s")
                                + "; processes apply it within a second, and the rate allowed moves towards it");
            return 0;
        }
    }
}
