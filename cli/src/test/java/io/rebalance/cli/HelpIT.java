package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.config.ConfigLoader;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Help as picocli and AWS CLI users expect it: {@code --help}, {@code -h} and {@code help <command>} on every
 * command print its usage on stdout and exit 0; every option and parameter says what it does; every command shows
 * examples; an option that overrides a config key names the key, its environment variable and its default, and
 * that default is the built-in one. Nothing here connects to anything.
 */
class HelpIT {
    private static final Pattern CONFIG_KEY = Pattern.compile("config ([a-z]+\\.[a-zA-Z]+)");
    private static final List<String> WITHOUT_EXAMPLES = List.of("help", "generate-completion");

    private static CommandLine model() {
        return new CommandLine(RebalanceCommand.class);
    }

    @Test
    void everyCommandPrintsItsHelpOnStdoutAndExitsZero() {
        SoftAssertions softly = new SoftAssertions();
        for (String name : model().getSubcommands().keySet()) {
            for (List<String> words : List.of(List.of(name, "--help"), List.of(name, "-h"), List.of("help", name))) {
                CliRun r = CliRun.of(words.toArray(String[]::new));
                softly.assertThat(r.exitCode()).as("%s: %s", words, r.err()).isZero();
                softly.assertThat(r.out()).as("%s", words).contains("Usage: rebalance " + name);
                softly.assertThat(r.err()).as("%s", words).isEmpty();
            }
        }
        for (List<String> words : List.<List<String>>of(List.of("--help"), List.of("help"), List.of())) {
            CliRun r = CliRun.of(words.toArray(String[]::new));
            softly.assertThat(r.exitCode()).as("%s", words).isZero();
            softly.assertThat(r.out())
                    .as("%s", words)
                    .contains("Usage: rebalance")
                    .contains("Commands:");
        }
        softly.assertAll();
    }

    @Test
    void everyOptionIsDescribedAndEveryCommandHasExamples() {
        SoftAssertions softly = new SoftAssertions();
        for (var e : model().getSubcommands().entrySet()) {
            CommandSpec spec = e.getValue().getCommandSpec();
            for (OptionSpec o : spec.options()) {
                if (o.hidden()) continue;
                softly.assertThat(String.join(" ", o.description()))
                        .as("%s %s", e.getKey(), o.longestName())
                        .isNotBlank();
            }
            spec.positionalParameters().forEach(p -> softly.assertThat(String.join(" ", p.description()))
                    .as("%s %s", e.getKey(), p.paramLabel())
                    .isNotBlank());
            if (!WITHOUT_EXAMPLES.contains(e.getKey())) {
                softly.assertThat(CliRun.of(e.getKey(), "--help").out())
                        .as("%s --help", e.getKey())
                        .contains("Examples:")
                        .contains("  rebalance ");
            }
        }
        softly.assertAll();
    }

    @Test
    void anOptionForAConfigKeyNamesItsVariableAndItsTrueDefault() {
        SoftAssertions softly = new SoftAssertions();
        int seen = 0;
        for (var e : model().getSubcommands().entrySet()) {
            for (OptionSpec o : e.getValue().getCommandSpec().options()) {
                String text = String.join(" ", o.description());
                Matcher m = CONFIG_KEY.matcher(text);
                if (!m.find()) continue;
                seen++;
                String key = m.group(1);
                softly.assertThat(text)
                        .as("%s %s", e.getKey(), o.longestName())
                        .contains("env " + ConfigLoader.envName(key))
                        .contains("(default " + ConfigLoader.defaultValue(key));
            }
        }
        softly.assertAll();
        assertThat(seen).as("options that override a config key").isGreaterThanOrEqualTo(6);
    }

    @Test
    void aCompletionScriptForBashAndZsh() {
        CliRun r = CliRun.of("generate-completion");
        assertThat(r.exitCode()).isZero();
        assertThat(r.out())
                .contains("complete -F")
                .contains("copy")
                .contains("cutover")
                .contains("--close-window");
    }
}
