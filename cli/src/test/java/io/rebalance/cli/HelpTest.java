package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import picocli.CommandLine.Command;

/** Every command answers {@code --help} with its usage and exit 0, as the root command does. */
class HelpTest {
    @Test
    void everyCommandPrintsItsUsageForHelp() {
        assertThat(CliRun.of("--help").exitCode()).isZero();
        Class<?>[] commands =
                RebalanceCommand.class.getAnnotation(Command.class).subcommands();
        assertThat(commands).isNotEmpty();
        for (Class<?> command : commands) {
            String name = command.getAnnotation(Command.class).name();
            CliRun help = CliRun.of(name, "--help");
            assertThat(help.exitCode()).as(name + " --help: " + help.err()).isZero();
            assertThat(help.out())
                    .as(name + " --help")
                    .contains("Usage: rebalance " + name)
                    .contains("--help");
        }
    }
}
