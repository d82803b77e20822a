package io.rebalance.cli;

import io.rebalance.core.config.ConfigLoader;
import io.rebalance.core.config.ConfigValidator;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** The options every command that reads the migration description shares. */
public final class ConfigOptions {
    @Option(
            names = {"-c", "--config"},
            paramLabel = "FILE",
            description = "YAML file describing the migration (docs/config.md); env REBALANCE_CONFIG. Without"
                    + " either, the built-in defaults.")
    Path config;

    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

    @Option(
            names = "--set",
            paramLabel = "KEY=VALUE",
            description = "Override one config key, e.g. --set mover.workers=16. Repeatable.")
    Map<String, String> overrides = new LinkedHashMap<>();

    private boolean warned;

    @Option(
            names = "--log-format",
            paramLabel = "FORMAT",
            description = "text (one line per event: ISO-8601 time, host, pid, level, logger, [MDC], message) or json"
                    + " (one JSON object per line); config log.format, env REBALANCE_LOG_FORMAT (default text)."
                    + " Logs go to stderr.")
    String logFormat;

    @Option(
            names = {"-v", "--verbose"},
            description = "Show stack traces with errors.")
    boolean verbose;

    /**
     * The flags that point another command at the same migration: {@code --config FILE} when one was given, and
     * every {@code --set}, then {@code extra} as {@code --set} too.
     */
    public List<String> args(Map<String, String> extra) {
        List<String> args = new ArrayList<>();
        if (config != null) args.addAll(List.of("--config", config.toString()));
        Map<String, String> all = new LinkedHashMap<>(overrides);
        all.putAll(extra);
        all.forEach((k, v) -> args.addAll(List.of("--set", k + "=" + v)));
        return args;
    }

    /** Loads and validates; nothing has connected to anything yet. */
    public MigrationConfig load() {
        return load(Map.of());
    }

    /**
     * @param extra overrides from a command's own flags, applied after --set
     * @throws RebalanceException CONFIG_INVALID for {@code target.endpoint: embedded}, which only {@code demo} takes
     */
    public MigrationConfig load(Map<String, String> extra) {
        MigrationConfig c = loadAllowingEmbedded(extra);
        if (c.target().embedded()) {
            throw new RebalanceException(
                    ErrorCode.CONFIG_INVALID,
                    "target.endpoint 'embedded' is the demo's DynamoDB Local inside one process, whose data ends with"
                            + " it; set target.endpoint (REBALANCE_TARGET_ENDPOINT) to your DynamoDB: empty for AWS,"
                            + " or the URL `rebalance-demo dynamodb-local` prints (http://127.0.0.1:8000)");
        }
        return c;
    }

    /** For {@code demo}, the one command whose DynamoDB may live and die with it. */
    public MigrationConfig loadAllowingEmbedded(Map<String, String> extra) {
        Map<String, String> all = new LinkedHashMap<>(overrides);
        if (logFormat != null) all.put("log.format", logFormat);
        all.putAll(extra);
        for (String key : all.keySet()) {
            if (key.isBlank())
                throw new RebalanceException(ErrorCode.CONFIG_INVALID, "--set needs KEY=VALUE, got an empty key");
        }
        ConfigLoader loader = ConfigLoader.fromSystem();
        String fromEnv = System.getenv("REBALANCE_CONFIG");
        Path file = config != null ? config : fromEnv == null || fromEnv.isBlank() ? null : Path.of(fromEnv);
        MigrationConfig loaded = loader.load(file, all);
        if (command != null && !warned)
            loader.warnings().forEach(w -> command.commandLine().getErr().println("warning: " + w));
        warned = true; // a command that loads twice (demo) warns once
        MigrationConfig valid = ConfigValidator.validate(loaded);
        LogFormat.apply(valid.log());
        return valid;
    }
}
