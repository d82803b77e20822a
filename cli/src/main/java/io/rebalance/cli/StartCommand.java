package io.rebalance.cli;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.copy.RunStatus;
import io.rebalance.mover.RunState;
import io.rebalance.ops.Connections;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Spec;

/** {@code rebalance start}: every copy process (running or started later) resumes copying. */
@Command(
        name = "start",
        description = "Start or resume copying in every process of the run.",
        footerHeading = "%nExamples:%n",
        footer = {"  rebalance start -c migration.yaml"})
final class StartCommand implements Callable<Integer> {
    @Mixin
    ConfigOptions options;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        MigrationConfig config = options.load();
        try (Connections c = new Connections(config, 2)) {
            RunState run = c.runState();
            RunStatus now = run.status();
            var out = spec.commandLine().getOut();
            if (now == RunStatus.FINISHED) {
                out.println("run " + run.name() + " is FINISHED; nothing to start (`rebalance reset` forgets it)");
                return 0;
            }
            if (now.copying()) {
                out.println("run " + run.name() + " is already " + now);
                return 0;
            }
            run.setStatus(RunStatus.TO_START);
            out.println("run " + run.name() + ": " + now + " -> TO_START"
                    + (run.plan() == null
                            ? "; no process has joined yet: start `rebalance copy`"
                            : "; copy processes resume within seconds"));
            return 0;
        }
    }
}
