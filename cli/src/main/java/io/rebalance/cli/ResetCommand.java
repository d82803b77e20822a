package io.rebalance.cli;

import io.rebalance.core.ErrorCode;
import io.rebalance.core.RebalanceException;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.redis.RedisScan;
import io.rebalance.mover.RunState;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code rebalance reset}: forgets a run (every key under the prefix). DynamoDB keeps what was copied; since writes
 * are idempotent, a new run simply overwrites it. Refuses while processes of the run are alive.
 */
@Command(name = "reset", description = "Forget the run under the prefix (Redis keys only; DynamoDB data stays).")
final class ResetCommand implements Callable<Integer> {
    @Mixin
    ConfigOptions options;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--yes", description = "Really delete; without it, only say what would be deleted.")
    boolean yes;

    @Override
    public Integer call() {
        MigrationConfig config = options.load();
        try (Connections c = new Connections(config, 2)) {
            RunState run = c.runState();
            var live = run.liveProcesses(config.mover().leaseTtlDuration().toMillis());
            if (!live.isEmpty()) {
                throw new RebalanceException(
                        ErrorCode.RUN_CONFLICT,
                        live.size() + " process(es) still run under prefix "
                                + config.redis().prefix() + " (" + String.join(", ", live.keySet())
                                + "); `rebalance stop` and end them first");
            }
            List<String> keys = RedisScan.keys(c.redis(), config.redis().prefix());
            var out = spec.commandLine().getOut();
            if (!yes) {
                out.println("would delete " + keys.size() + " keys under "
                        + config.redis().prefix() + "; run again with --yes");
                return 0;
            }
            for (String k : keys)
                c.redis().del(k); // one by one: keys of different slots may live on different cluster nodes
            out.println("deleted " + keys.size() + " keys under "
                    + config.redis().prefix() + "; DynamoDB data is untouched");
            return 0;
        }
    }
}
