package io.rebalance.cli;

import io.rebalance.testkit.SharedServices;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** One `rebalance` command run in this JVM, with what it printed and its exit code. */
record CliRun(int exitCode, String out, String err) {

    static CliRun of(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = RebalanceCommand.execute(
                args,
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new CliRun(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** {@code words} (a command and its own flags) followed by {@code flags}. */
    static CliRun of(List<String> flags, String... words) {
        List<String> args = new ArrayList<>(List.of(words));
        args.addAll(flags);
        return of(args.toArray(String[]::new));
    }

    /** The flags that point a command at the shared test services, a table and a prefix of its own. */
    static List<String> base(SharedServices s, String table, String prefix) {
        List<String> args = new ArrayList<>();
        for (String kv : List.of(
                "source.jdbcUrl=" + s.jdbcUrl,
                "source.table=" + table,
                "target.table=" + table,
                "target.endpoint=" + s.dynamo.endpoint(),
                "redis.url=" + s.redisUrl,
                "redis.prefix=" + prefix)) {
            args.add("--set");
            args.add(kv);
        }
        return args;
    }

    /**
     * The flags of {@code mover.coordinator: postgres} with its tables in {@code schema}, and a Redis URL nothing
     * listens on: whatever still reached for Redis would fail.
     */
    static List<String> coordinatedByPostgres(String schema) {
        return CopyProcesses.settings(
                "mover.coordinator=postgres", "coordinator.schema=" + schema, "redis.url=redis://127.0.0.1:1");
    }
}
