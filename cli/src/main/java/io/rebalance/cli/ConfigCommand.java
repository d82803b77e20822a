package io.rebalance.cli;

import io.rebalance.core.config.ConfigLoader;
import io.rebalance.core.config.ConfigPrinter;
import io.rebalance.core.config.MigrationConfig;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code rebalance config}: the effective configuration after every layer, validated, secrets masked. */
@Command(
        name = "config",
        description = "Print the effective configuration (defaults, file, environment, flags), validated, secrets"
                + " masked.",
        footerHeading = "%nExamples:%n",
        footer = {
            "  rebalance config -c migration.yaml",
            "  rebalance config -c migration.yaml --set mover.workers=16",
            "  rebalance config --env"
        })
final class ConfigCommand implements Callable<Integer> {
    @Mixin
    ConfigOptions options;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--env", description = "List the environment variable of every key instead.")
    boolean env;

    @Option(names = "--json", description = "Print the configuration as one JSON object (secrets masked).")
    boolean json;

    @Override
    public Integer call() {
        var out = spec.commandLine().getOut();
        if (env) {
            ConfigLoader.keys().forEach(k -> out.println(ConfigLoader.envName(k) + "  (" + k + ")"));
            return 0;
        }
        MigrationConfig config = options.load();
        out.print(json ? ConfigPrinter.toJson(config) + System.lineSeparator() : ConfigPrinter.toYaml(config));
        out.flush(); // print() does not autoflush, and main exits with System.exit
        return 0;
    }
}
