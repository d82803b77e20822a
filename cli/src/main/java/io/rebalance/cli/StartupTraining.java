package io.rebalance.cli;

import java.io.OutputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * Run once by the build, under {@code -XX:ArchiveClassesAtExit}, to record the classes a command loads at start in a
 * class data sharing archive ({@code cli/target/rebalance.jsa}) that {@code bin/rebalance} maps at every start instead
 * of loading and verifying them again: it halves a short command's JVM start (bench/startup.sh). Every command's help,
 * {@code config}, and commands that fail at once against services on port 1 (nothing is written anywhere).
 */
public final class StartupTraining {
    private StartupTraining() {}

    public static void main(String[] args) {
        PrintStream nowhere = new PrintStream(OutputStream.nullOutputStream());
        List<String> away = List.of(
                "--set", "source.jdbcUrl=jdbc:postgresql://127.0.0.1:1/none",
                "--set", "redis.url=redis://127.0.0.1:1",
                "--set", "target.endpoint=http://127.0.0.1:1");
        RebalanceCommand.execute(new String[] {"--help"}, nowhere, nowhere);
        for (String command : List.of(
                "copy",
                "tail",
                "verify",
                "check",
                "status",
                "cutover",
                "start",
                "stop",
                "rate",
                "reset",
                "config",
                "dashboard")) {
            RebalanceCommand.execute(new String[] {command, "--help"}, nowhere, nowhere);
        }
        for (String command : List.of("config", "status", "check", "verify", "start", "stop", "rate")) {
            ArrayList<String> words = new ArrayList<>(List.of(command));
            if (command.equals("verify")) words.add("--all");
            if (command.equals("rate")) words.add("10");
            words.addAll(away);
            RebalanceCommand.execute(words.toArray(String[]::new), nowhere, nowhere);
        }
        System.exit(0);
    }
}
