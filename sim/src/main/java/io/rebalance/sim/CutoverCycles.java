package io.rebalance.sim;

import io.rebalance.protocol.route.Target;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Cutover-and-rollback cycles with an {@link AppSimulator} writing across every flip (the cutover's acceptance run): each
 * cycle runs {@code rebalance cutover}, lets the application write to DynamoDB, runs {@code rebalance cutover
 * --rollback}, lets it write to Postgres, then pauses it and compares both whole stores with its {@link Ledger}.
 * Postgres must match at once (the rollback drained every DynamoDB write into it); DynamoDB once the tail has caught
 * up. The commands run in this JVM exactly as the CLI runs them.
 */
public final class CutoverCycles {
    private static final Pattern BLOCKED = Pattern.compile("writes were blocked for (\\d+) ms");
    private static final Pattern STEP = Pattern.compile("(?m)^\\s+([A-Z_]+)\\s+(\\d+) ms$");

    /** {@code rebalance cutover}'s exit code for an abort before the flip with everything put back. */
    private static final int ABORTED = 32;

    /** {@code rebalance cutover}'s exit code for a refusal (a rollback when the route is SOURCE already). */
    private static final int REFUSED = 31;

    /** How long a phase may take to acknowledge its writes. */
    private static final Duration WRITES_BOUND = Duration.ofSeconds(60);

    private static final Command NOT_RUN = new Command(-1, 0, Map.of(), "not run");

    private final List<String> configArgs;
    private final AppSimulator app;
    private final PrintStream progress;
    private List<String> cutoverFlags = List.of();
    private Restarter restarter;
    private Set<Integer> disrupted = Set.of();
    private Random random = new Random(0);
    private Map<String, Long> lastCutoverSteps = Map.of();
    private Map<String, Long> lastRollbackSteps = Map.of();

    /**
     * @param configArgs the flags that point a command at the migration ({@code --config}, {@code --set k=v})
     * @param progress one line per cycle
     */
    /** Runs one {@code rebalance} command line in this JVM: {@code RebalanceCommand::execute}. */
    @FunctionalInterface
    public interface Rebalance {
        int execute(String[] args, PrintStream out, PrintStream err);
    }

    private final Rebalance rebalance;

    public CutoverCycles(List<String> configArgs, AppSimulator app, PrintStream progress, Rebalance rebalance) {
        this.rebalance = rebalance;
        this.configArgs = configArgs;
        this.app = app;
        this.progress = progress;
    }

    /** Extra flags for every {@code rebalance cutover} (not the rollback), such as {@code --verify-all}. */
    public CutoverCycles cutoverFlags(String... flags) {
        this.cutoverFlags = List.of(flags);
        return this;
    }

    /** Restarts the Redis every part uses (the test's own), as a crash does. */
    @FunctionalInterface
    public interface Restarter {
        void restart() throws Exception;
    }

    /**
     * Restarts Redis once in each of {@code cycles}, at a moment {@code seed} picks during the cutover or the
     * rollback; such a cycle then runs {@code cutover --recover} and goes on from wherever the route is.
     */
    public CutoverCycles restartRedis(Restarter restarter, Set<Integer> cycles, long seed) {
        this.restarter = restarter;
        this.disrupted = Set.copyOf(cycles);
        this.random = new Random(seed);
        return this;
    }

    /** One command's result: its write-blocked window and its steps' times. */
    public record Command(int exitCode, long blockedMs, Map<String, Long> stepMs, String output) {}

    /**
     * One cycle. A cutover that aborts (exit 32) still makes a cycle: the application writes on to Postgres, and the
     * stores are compared all the same.
     *
     * @param postgresProblems differences between Postgres and the ledger right after the rollback
     * @param dynamoProblems differences between DynamoDB and the ledger once the tail caught up (or gave up)
     * @param catchUpMs how long DynamoDB took to hold every acknowledged write after the pause
     */
    public record Cycle(
            int number,
            Command cutover,
            Command rollback,
            long writesToDynamo,
            long writesToPostgres,
            long writingMs,
            long[] writeMicros,
            List<String> postgresProblems,
            List<String> dynamoProblems,
            long catchUpMs,
            String restart,
            Command recover,
            long failedWrites) {
        /** The application's acknowledged writes a second while it ran, blocked windows included. */
        public double writesPerSecond() {
            return writingMs == 0 ? 0 : (writesToDynamo + writesToPostgres) * 1000.0 / writingMs;
        }

        /** The cutover aborted before its flip (writes went on to Postgres); no rollback ran. */
        public boolean aborted() {
            return cutover.exitCode == ABORTED;
        }

        /**
         * Every command did what it must (an abort is safe; after a Redis restart, the recovery succeeded and the
         * rollback ran or was not needed) and both stores hold exactly what was acknowledged.
         */
        public boolean clean() {
            boolean commands = restart.isEmpty()
                    ? aborted() || cutover.exitCode == 0 && rollback.exitCode == 0
                    : recover.exitCode == 0 && (rollback.exitCode == 0 || rollback.exitCode == REFUSED);
            return commands && postgresProblems.isEmpty() && dynamoProblems.isEmpty();
        }
    }

    /**
     * Runs {@code cycles} cycles, each letting the application acknowledge {@code writesPerPhase} writes on either
     * side; stops at the first cycle that is not clean.
     */
    public List<Cycle> run(int cycles, int writesPerPhase) throws SQLException {
        List<Cycle> out = new ArrayList<>();
        Ledger ledger = app.ledger();
        for (int i = 1; i <= cycles; i++) {
            long began = System.nanoTime();
            app.drainWriteLatencies();
            long dynamoBefore = ledger.acknowledged(Target.DYNAMODB);
            long pgBefore = ledger.acknowledged(Target.POSTGRES);
            long failedBefore = ledger.failures();
            List<String> flags = new ArrayList<>(List.of("cutover"));
            flags.addAll(cutoverFlags);
            boolean disrupt = disrupted.contains(i);
            boolean duringCutover = disrupt && random.nextBoolean();
            Map<String, Long> aimed = duringCutover ? lastCutoverSteps : lastRollbackSteps;
            String step = aimed.isEmpty() ? "start" : new ArrayList<>(aimed.keySet()).get(random.nextInt(aimed.size()));
            long delayMs = moment(aimed, step);
            String restart = disrupt
                    ? "Redis restarted " + delayMs + " ms into the " + (duringCutover ? "cutover" : "rollback")
                            + " (aimed at " + step + ")"
                    : "";
            Command recover = NOT_RUN;
            Command cut = duringCutover ? command(flags, delayMs) : command(flags);
            Command back = NOT_RUN;
            if (disrupt) {
                if (!duringCutover && cut.exitCode == 0) {
                    app.awaitAcknowledged(Target.DYNAMODB, dynamoBefore + writesPerPhase, WRITES_BOUND);
                    command(List.of("cutover", "--rollback"), delayMs);
                }
                recover = recovered();
                // refused (31) when the route is SOURCE already; a restarted Redis may have lost keys of the log of
                // writes to DynamoDB, so the rollback compares every key, as its refusal would tell a person to
                back = command(List.of("cutover", "--rollback", "--verify-all", "--max-write-block", "60s"));
            } else if (cut.exitCode == 0) {
                lastCutoverSteps = cut.stepMs;
                app.awaitAcknowledged(Target.DYNAMODB, dynamoBefore + writesPerPhase, WRITES_BOUND);
                back = command(List.of("cutover", "--rollback"));
                if (back.exitCode == 0) lastRollbackSteps = back.stepMs;
            } else if (cut.exitCode != ABORTED) {
                out.add(new Cycle(i, cut, back, 0, 0, 0, new long[0], List.of(), List.of(), 0, "", recover, 0));
                break; // refused or failed: nothing more to measure
            }
            if (back.exitCode == 0 || back == NOT_RUN || disrupt)
                app.awaitAcknowledged(Target.POSTGRES, pgBefore + writesPerPhase, WRITES_BOUND);
            app.pause();
            long writingMs = (System.nanoTime() - began) / 1_000_000;
            Map<String, Long> pgSeqs = app.postgresSeqs();
            List<String> pg = ledger.check("postgres", pgSeqs, 10);
            long start = System.nanoTime();
            List<String> dynamo = app.dynamoAgainst(pgSeqs);
            long deadline = start + Duration.ofSeconds(60).toNanos();
            while (!dynamo.isEmpty() && System.nanoTime() < deadline) {
                LockSupport.parkNanos(Duration.ofMillis(100).toNanos()); // the tail is still applying
                dynamo = app.dynamoAgainst(pgSeqs);
            }
            long catchUp = (System.nanoTime() - start) / 1_000_000;
            app.resume();
            Cycle c = new Cycle(
                    i,
                    cut,
                    back,
                    ledger.acknowledged(Target.DYNAMODB) - dynamoBefore,
                    ledger.acknowledged(Target.POSTGRES) - pgBefore,
                    writingMs,
                    app.drainWriteLatencies(),
                    pg,
                    dynamo,
                    catchUp,
                    restart,
                    recover,
                    ledger.failures() - failedBefore);
            out.add(c);
            progress.printf(
                    "cycle %2d: cutover blocked %4d ms (verified %5d ms before), rollback blocked %4d ms; %d writes"
                            + " to DynamoDB, %d to Postgres (%.0f/s, latency p50 %d ms, p99 %d ms, max %d ms); %s%s%s%n",
                    i,
                    cut.blockedMs,
                    cut.stepMs.getOrDefault("PRE_VERIFY", 0L),
                    back.blockedMs,
                    c.writesToDynamo(),
                    c.writesToPostgres(),
                    c.writesPerSecond(),
                    Percentiles.of(c.writeMicros(), 0.5) / 1000,
                    Percentiles.of(c.writeMicros(), 0.99) / 1000,
                    Percentiles.of(c.writeMicros(), 1.0) / 1000,
                    restart.isEmpty()
                            ? ""
                            : restart + ", then `cutover --recover`: " + firstLine(recover.output) + "; ",
                    c.aborted() ? "CUTOVER ABORTED (" + firstLine(cut.output) + "); " : "",
                    c.clean()
                            ? "both stores hold every acknowledged write once (" + ledger.rows() + " rows)"
                            : pg + " " + dynamo + " " + back.output);
            if (!c.clean()) break;
        }
        return out;
    }

    /** A moment inside {@code step}, as long as the steps before it took last time (0 when there is no last time). */
    private long moment(Map<String, Long> steps, String step) {
        long offset = 0;
        for (Map.Entry<String, Long> s : steps.entrySet()) {
            if (s.getKey().equals(step)) return offset + random.nextLong(Math.max(1, s.getValue()));
            offset += s.getValue();
        }
        return 0;
    }

    /** Runs a command while Redis restarts {@code restartAfterMs} after it began. */
    private Command command(List<String> words, long restartAfterMs) {
        Thread restarting = new Thread(() -> {
            try {
                Thread.sleep(restartAfterMs);
                restarter.restart();
            } catch (Exception e) {
                throw new IllegalStateException("restarting Redis failed", e);
            }
        });
        restarting.start();
        Command c = command(words);
        try {
            restarting.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return c;
    }

    /** {@code cutover --recover}, again while Redis is still coming back (a new process each time, as a person would). */
    private Command recovered() {
        Command c = command(List.of("cutover", "--recover"));
        for (int attempt = 0; c.exitCode != 0 && attempt < 10; attempt++) {
            LockSupport.parkNanos(Duration.ofSeconds(1).toNanos());
            c = command(List.of("cutover", "--recover"));
        }
        return c;
    }

    private static String firstLine(String text) {
        return text.lines().filter(l -> !l.isBlank()).findFirst().orElse("");
    }

    /** Runs one {@code rebalance} command in this JVM. */
    public Command command(List<String> words) {
        List<String> args = new ArrayList<>(words);
        args.addAll(configArgs);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code = rebalance.execute(
                args.toArray(String[]::new),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(out, true, StandardCharsets.UTF_8));
        String text = out.toString(StandardCharsets.UTF_8);
        Matcher m = BLOCKED.matcher(text);
        long blocked = m.find() ? Long.parseLong(m.group(1)) : -1;
        Map<String, Long> steps = new LinkedHashMap<>();
        Matcher s = STEP.matcher(text);
        while (s.find()) steps.put(s.group(1), Long.parseLong(s.group(2)));
        return new Command(code, blocked, steps, text);
    }
}
