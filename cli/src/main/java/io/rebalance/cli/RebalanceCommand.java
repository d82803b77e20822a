package io.rebalance.cli;

import io.rebalance.core.config.ConfigLoader;
import io.rebalance.core.config.Durations;
import io.rebalance.core.redis.RedisConnector;
import io.rebalance.core.source.SourceSession;
import io.rebalance.cutover.CutoverHooks;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.slf4j.bridge.SLF4JBridgeHandler;
import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code rebalance}: move a time-ordered Postgres table into DynamoDB. Every failure a person can act on ends with
 * one line on stderr naming what failed and what to do, and the exit code of its {@link ErrorCode}; stack traces
 * only with {@code --verbose}.
 */
@Command(
        name = "rebalance",
        mixinStandardHelpOptions = true,
        scope = CommandLine.ScopeType.INHERIT, // --help and --version on every subcommand too
        version = "rebalance 0.1.0",
        description = "Move a large time-ordered Postgres table into DynamoDB with zero downtime.",
        footerHeading = "%nA migration, in order:%n",
        footer = {
            "  rebalance check    -c migration.yaml                 # what would block",
            "  rebalance tail     -c migration.yaml --create-table  # keep it running",
            "  rebalance copy     -c migration.yaml                 # in many processes",
            "  rebalance verify   -c migration.yaml --all",
            "  rebalance cutover  -c migration.yaml --prepare, then --dry-run, then without flags",
            "  rebalance cutover  -c migration.yaml --close-window --yes",
            "  rebalance dashboard -c migration.yaml                # a page over all of it",
            "%n`rebalance help <command>` or `rebalance <command> --help` describes a command;"
                    + " `source <(rebalance generate-completion)` completes them in bash and zsh."
        },
        subcommands = {
            CommandLine.HelpCommand.class,
            AutoComplete.GenerateCompletion.class,
            CheckCommand.class,
            CopyCommand.class,
            StartCommand.class,
            StopCommand.class,
            StatusCommand.class,
            VerifyCommand.class,
            TailCommand.class,
            RateCommand.class,
            ResetCommand.class,
            ConfigCommand.class,
            CutoverCommand.class,
            ShadowCommand.class,
            DashboardCommand.class
        })
public final class RebalanceCommand implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** The commands of rebalance-demo.jar, named when the production jar is asked for one of them. */
    private static final List<String> DEMO_COMMANDS = List.of("demo", "dynamodb-local");

    public static void main(String[] args) {
        System.exit(execute(args, System.out, System.err));
    }

    /** Runs one command line and returns its exit code; used by main and by the tests. */
    public static int execute(String[] args, PrintStream out, PrintStream err) {
        return execute(args, out, err, CutoverHooks.NONE);
    }

    /**
     * Like {@link #execute(String[], PrintStream, PrintStream)}, with {@code hooks} before each step of a cutover
     * command: for a test harness that kills the process at one. The product has no flag for it.
     */
    public static int execute(String[] args, PrintStream out, PrintStream err, CutoverHooks hooks) {
        return execute(args, out, err, hooks, List.of());
    }

    /**
     * Like {@link #execute(String[], PrintStream, PrintStream, CutoverHooks)}, with {@code more} picocli commands
     * beside the product's: how rebalance-demo.jar adds {@code demo} and {@code dynamodb-local}.
     */
    public static int execute(
            String[] args, PrintStream out, PrintStream err, CutoverHooks hooks, List<Class<?>> more) {
        boolean verbose =
                Arrays.asList(args).contains("-v") || Arrays.asList(args).contains("--verbose");
        bridgeJavaUtilLogging();
        {
            CommandLine cl = new CommandLine(RebalanceCommand.class);
            more.forEach(cl::addSubcommand);
            ((CutoverCommand) cl.getSubcommands().get("cutover").getCommand()).hooks = hooks;
            PrintWriter errWriter = new PrintWriter(err, true);
            cl.setUsageHelpWidth(100);
            // a duration flag reads the config's form; a bad one is picocli's parameter error naming the flag (exit 10)
            cl.registerConverter(Duration.class, RebalanceCommand::duration);
            cl.setOut(new PrintWriter(out, true));
            cl.setErr(errWriter);
            cl.setParameterExceptionHandler((ex, a) -> {
                errWriter.println("error: " + ex.getMessage());
                ex.getCommandLine().usage(errWriter);
                // verify keeps diff(1)'s codes so scripts can tell "differs" (1) from "could not tell" (2)
                return ex.getCommandLine().getCommand() instanceof VerifyCommand
                        ? VerifyCommand.ERROR
                        : ErrorCode.CONFIG_INVALID.exitCode();
            });
            cl.setExecutionExceptionHandler((e, commandLine, parsed) -> report(e, errWriter, verbose));
            String demo = demoCommandAsked(args);
            if (demo != null && !cl.getSubcommands().containsKey(demo)) {
                errWriter.println("error: `" + demo + "` is a command of rebalance-demo.jar, which carries DynamoDB"
                        + " Local; this production jar leaves it out. Run bin/rebalance-demo " + demo
                        + " (docs/cli.md#demo)");
                return ErrorCode.CONFIG_INVALID.exitCode();
            }
            if (args.length > 0
                    && !args[0].startsWith("-")
                    && !cl.getSubcommands().containsKey(args[0])) {
                // before picocli: with --help after it, it printed the root's help and exited 0
                errWriter.println("error: unknown command '" + args[0] + "'" + nearest(args[0], cl)
                        + "; `rebalance --help` lists the commands");
                return ErrorCode.CONFIG_INVALID.exitCode();
            }
            return cl.execute(args);
        }
    }

    /** java.util.logging's records (pgjdbc, the JDK) through logback, in the product's log layout; once a JVM. */
    private static synchronized void bridgeJavaUtilLogging() {
        if (SLF4JBridgeHandler.isInstalled()) return;
        SLF4JBridgeHandler.removeHandlersForRootLogger(); // else the JDK's two-line format on stderr as well
        SLF4JBridgeHandler.install();
    }

    private static Duration duration(String text) {
        try {
            return Durations.parse(text);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.TypeConversionException(e.getMessage());
        }
    }

    /** ", did you mean X?" for the command nearest a mistyped one (two edits or fewer, or a prefix), else "". */
    private static String nearest(String typed, CommandLine cl) {
        String best = null;
        int bestDistance = 3;
        for (String name : cl.getSubcommands().keySet()) {
            int d = ConfigLoader.editDistance(typed, name);
            if (name.startsWith(typed) && typed.length() >= 3) d = Math.min(d, 1);
            if (d < bestDistance) {
                best = name;
                bestDistance = d;
            }
        }
        return best == null ? "" : ", did you mean " + best + "?";
    }

    /** {@code demo} or {@code dynamodb-local} when the command line asks for one ({@code help} before it too). */
    private static String demoCommandAsked(String[] args) {
        int i = args.length > 0 && args[0].equals("help") ? 1 : 0;
        return args.length > i && DEMO_COMMANDS.contains(args[i]) ? args[i] : null;
    }

    static int report(Exception e, PrintWriter err, boolean verbose) {
        if (e instanceof RebalanceException re) {
            err.println("error: " + re.getMessage());
            if (verbose) re.printStackTrace(err);
            return re.code().exitCode();
        }
        Optional<String> lost = RedisConnector.connectionLost(e);
        if (lost.isPresent()) {
            // Redis went away mid-command: a service to start again, not an internal error
            err.println("error: Redis stopped answering (" + lost.get() + "); start it, or fix redis.url, and"
                    + " run the command again [" + ErrorCode.REDIS_UNREACHABLE + "]");
            if (verbose) e.printStackTrace(err);
            return ErrorCode.REDIS_UNREACHABLE.exitCode();
        }
        Optional<String> postgres = SourceSession.connectionLost(e);
        if (postgres.isPresent()) {
            // Postgres went away mid-command (the source, or the copy's coordinator): a service, not an internal error
            err.println("error: Postgres stopped answering (" + postgres.get() + "); start it, or fix source.jdbcUrl"
                    + " (and coordinator.jdbcUrl if set), and run the command again [" + ErrorCode.SOURCE_UNREACHABLE
                    + "]");
            if (verbose) e.printStackTrace(err);
            return ErrorCode.SOURCE_UNREACHABLE.exitCode();
        }
        err.println("error: unexpected failure: " + e + (verbose ? "" : " (run again with --verbose for details)"));
        if (verbose) e.printStackTrace(err);
        return ErrorCode.INTERNAL.exitCode();
    }
}
