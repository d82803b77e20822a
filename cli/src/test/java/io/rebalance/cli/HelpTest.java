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

    /** A mistyped command is named with the nearest one, --help or not (with --help it printed the root help, 0). */
    @Test
    void aMistypedCommandIsNamedWithTheNearestOneEvenWithHelp() {
        for (String[] args : new String[][] {{"dashbord", "--help"}, {"dashbord"}}) {
            CliRun typo = CliRun.of(args);
            assertThat(typo.exitCode()).as(String.join(" ", args)).isEqualTo(10);
            assertThat(typo.err())
                    .contains("unknown command 'dashbord', did you mean dashboard?")
                    .contains("`rebalance --help` lists the commands");
            assertThat(typo.out()).isEmpty();
        }
        assertThat(CliRun.of("verfy").err()).contains("did you mean verify?");
        assertThat(CliRun.of("zzzzzz").err()).contains("unknown command 'zzzzzz';");
        assertThat(CliRun.of("help", "status").exitCode()).isZero();
    }

    /** reset --help said --forget worked "even while in use"; each part is refused while it is in use. */
    @Test
    void resetHelpSaysWhenEachPartIsRefused() {
        String help = CliRun.of("reset", "--help").out().replaceAll("\\s+", " ");
        assertThat(help)
                .doesNotContain("even while in use")
                .contains("refused while copy processes run")
                .contains("refused while a tail runs")
                .contains("also refused while a route exists");
    }
}
