package io.rebalance.cli;

import io.rebalance.core.config.Durations;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.copy.RunStatus;
import io.rebalance.mover.RunState;
import io.rebalance.ops.Connections;
import io.rebalance.protocol.ErrorCode;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code rebalance stop}: every copy process finishes its current page, saves progress, releases its slots and
 * waits for a start. The keeper marks the run STOPPED once no process holds a slot; this command waits for that.
 */
@Command(
        name = "stop",
        description = "Stop copying in every process; progress is kept and `rebalance start` resumes.",
        footerHeading = "%nExamples:%n",
        footer = {"  rebalance stop -c migration.yaml", "  rebalance stop -c migration.yaml --timeout 2m"})
final class StopCommand implements Callable<Integer> {
    @Mixin
    ConfigOptions options;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(
            names = "--timeout",
            paramLabel = "DURATION",
            defaultValue = "60s",
            description = "How long to wait for every process to release its slots (default ${DEFAULT-VALUE}).")
    Duration timeout;

    @Override
    public Integer call() throws InterruptedException {
        MigrationConfig config = options.load();
        try (Connections c = new Connections(config, 2)) {
            RunState run = c.runState();
            var out = spec.commandLine().getOut();
            RunStatus now = run.status();
            if (!now.copying() && now != RunStatus.TO_STOP) {
                out.println("run " + run.name() + " is " + now + "; nothing to stop");
                return 0;
            }
            run.setStatus(RunStatus.TO_STOP);
            long leaseMs = config.mover().leaseTtl().toMillis();
            long deadline = System.nanoTime() + timeout.toNanos();
            while (System.nanoTime() < deadline) {
                if (run.liveProcesses(leaseMs).isEmpty()) { // no keeper alive to settle it: settle it here
                    run.compareAndSet(RunStatus.TO_STOP, RunStatus.STOPPED);
                }
                if (run.status() == RunStatus.STOPPED) {
                    out.println("run " + run.name()
                            + " is STOPPED; every process released its slots."
                            + " `rebalance start` resumes from the saved progress");
                    return 0;
                }
                Thread.sleep(250); // polling a Redis key for a person at a terminal; not a correctness wait
            }
            out.println(
                    "run " + run.name() + " is TO_STOP; some process still holds slots after "
                            + Durations.format(timeout)
                            + " (see `rebalance status`). It stops after its current page; a dead one's leases expire by themselves");
            return ErrorCode.INTERRUPTED.exitCode();
        }
    }
}
