package io.rebalance.demo;

import io.rebalance.cli.RebalanceCommand;
import io.rebalance.client.GuardSettings;
import io.rebalance.core.config.Durations;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.redis.RedisFitness;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.ops.Connections;
import io.rebalance.protocol.route.Target;
import io.rebalance.sim.AppSimulator;
import io.rebalance.sim.CutoverCycles;
import io.rebalance.sim.Ledger;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * The demo's cutover, as docs/guide.md runs one, while an application ({@link AppSimulator}) writes through
 * WriteGuard and reads through Router: {@code cutover --prepare}, {@code --dry-run} until the reverse stream runs,
 * {@code cutover}, {@code --rollback}, {@code cutover} again, then both stores compared with every write the
 * application was acknowledged, then {@code --close-window --yes}. Each command runs in this process exactly as the
 * CLI runs it; each write-blocked window is printed.
 */
final class CutoverLifecycle {
    /** 100 writes/s on 8 threads (a thread waits for each write), half updates; 50 reads/s. */
    private static final AppSimulator.Load LOAD = new AppSimulator.Load(8, 100, 2, 50, 0.5, 0.01);
    /** Writes the application makes between two commands: five seconds of its load. */
    private static final int WRITES_PER_PHASE = 500;

    private static final Duration BOUND = Duration.ofSeconds(60);

    private final MigrationConfig config;
    private final Connections c;
    private final PrintWriter out;
    private final List<String> configArgs;
    /** Each command's write-blocked window, in the order they ran. */
    private final Map<String, Long> windows = new LinkedHashMap<>();

    private boolean ok = true;

    /** @param configArgs the flags that point a command at the demo's migration */
    CutoverLifecycle(MigrationConfig config, List<String> configArgs, Connections c, PrintWriter out) {
        this.config = config;
        this.c = c;
        this.out = out;
        this.configArgs = new ArrayList<>(configArgs);
    }

    /** @return whether every command succeeded and both stores hold exactly the application's acknowledged writes */
    boolean run() throws Exception {
        try {
            return lifecycle();
        } catch (IllegalStateException | SQLException e) {
            // the application did not get its writes acknowledged in time, or its table could not be read
            out.println("   FAILED: " + e.getMessage());
            return false;
        }
    }

    private boolean lifecycle() throws Exception {
        if (!aof()) {
            configArgs.add("--allow-redis-without-aof");
            out.println("   Redis keeps no append-only file, so the demo passes --allow-redis-without-aof; a real"
                    + " cutover needs one (docs/redis.md)");
        }
        CutoverCycles rebalance = new CutoverCycles(configArgs, null, null, RebalanceCommand::execute);
        if (!ran(rebalance, "cutover", "--prepare")) return false;
        SourceTable source;
        try (Connection pg = new SourceSession(config.source()).openForPreflight()) {
            source = SourceTable.inspect(pg, config);
        }
        GuardSettings guard = new GuardSettings(
                config.redis().keyspace().prefix(),
                Duration.ofSeconds(5),
                Duration.ofSeconds(30), // above cutover.maxWriteBlock: a cutover that keeps its bound fails no write
                config.cutover().pgFence(),
                config.cutover().dynamoFence());
        try (AppSimulator app = new AppSimulator(config, source, c.redis(), c.dynamo(), guard)) {
            app.start(LOAD, 7);
            out.printf(
                    "   the application writes %d/s through WriteGuard (half of them updates) and reads %d/s through"
                            + " Router%n",
                    LOAD.writesPerSecond(), LOAD.readsPerSecond());
            if (!dryRun(rebalance)) return false;
            Ledger ledger = app.ledger();
            if (!window(rebalance, "cutover")) return false;
            writes(app, Target.DYNAMODB);
            if (!window(rebalance, "cutover", "--rollback")) return false;
            writes(app, Target.POSTGRES);
            if (!window(rebalance, "cutover")) return false;
            writes(app, Target.DYNAMODB);

            app.pause();
            long acknowledged = ledger.acknowledged(Target.POSTGRES) + ledger.acknowledged(Target.DYNAMODB);
            out.printf(
                    "   the application pauses: %,d writes acknowledged (%,d by Postgres, %,d by DynamoDB), %,d failed;"
                            + " %,d reads (%,d from Postgres, %,d from DynamoDB), %d stale%n",
                    acknowledged,
                    ledger.acknowledged(Target.POSTGRES),
                    ledger.acknowledged(Target.DYNAMODB),
                    ledger.failures(),
                    app.reads(Target.POSTGRES) + app.reads(Target.DYNAMODB),
                    app.reads(Target.POSTGRES),
                    app.reads(Target.DYNAMODB),
                    app.staleReads().size());
            // DynamoDB's writes reach Postgres through the reverse stream, which promises no delivery time
            List<String> postgres = settled(() -> ledger.check("postgres", postgresSeqs(app), 10));
            List<String> dynamo = app.dynamoAgainst(postgresSeqs(app));
            out.printf(
                    "   Postgres against the application's ledger: %s%n   DynamoDB against the ledger and Postgres,"
                            + " row by row: %s%n",
                    postgres.isEmpty() ? "every acknowledged write, once (" + ledger.rows() + " rows)" : postgres,
                    dynamo.isEmpty() ? "the same" : dynamo);
            ok &= postgres.isEmpty() && dynamo.isEmpty() && app.staleReads().isEmpty() && ledger.failures() == 0;
            app.errors().forEach(e -> out.println("   application error: " + e));

            app.resume();
            long before = ledger.acknowledged(Target.DYNAMODB);
            if (!window(rebalance, "cutover", "--close-window", "--yes")) return false;
            app.awaitAcknowledged(Target.DYNAMODB, before + WRITES_PER_PHASE / 5, BOUND);
            app.pause();
            List<String> afterClose = ledger.check("dynamodb", app.dynamoSeqs(), 10);
            out.printf(
                    "   DynamoDB is the store of record: after the window closed it acknowledged %,d more writes and"
                            + " holds %s%n",
                    ledger.acknowledged(Target.DYNAMODB) - before,
                    afterClose.isEmpty() ? "every acknowledged write, once" : afterClose);
            ok &= afterClose.isEmpty()
                    && app.errors().isEmpty()
                    && app.staleReads().isEmpty();
        }
        out.println("   write-blocked windows, each bounded by cutover.maxWriteBlock ("
                + Durations.format(config.cutover().maxWriteBlock()) + "):");
        windows.forEach((command, ms) -> out.printf("     %-40s %5d ms%n", command, ms));
        return ok;
    }

    /** Whether Redis keeps an append-only file; when INFO cannot be read, the cutover commands will say so. */
    private boolean aof() {
        try {
            return RedisFitness.of(c.redis()).aof();
        } catch (RuntimeException e) {
            return true;
        }
    }

    /** {@code --dry-run} until every pre-check passes: the tail starts the reverse stream within seconds. */
    private boolean dryRun(CutoverCycles rebalance) throws Exception {
        out.println("   $ rebalance cutover --dry-run   (again until the tail runs the reverse stream)");
        List<CutoverCycles.Command> tries = new ArrayList<>();
        Poll.until( // the tail reads the stream once a second
                () -> {
                    tries.add(rebalance.command(List.of("cutover", "--dry-run")));
                    return tries.get(tries.size() - 1).exitCode() == 0;
                },
                Duration.ofSeconds(1),
                BOUND);
        CutoverCycles.Command dry = tries.get(tries.size() - 1);
        if (dry.exitCode() == 0) out.printf("     every pre-check passes (dry run %d)%n", tries.size());
        return check(dry);
    }

    /** Runs a cutover or a rollback and prints its write-blocked window and its steps. */
    private boolean window(CutoverCycles rebalance, String... words) {
        out.println("   $ rebalance " + String.join(" ", words));
        CutoverCycles.Command r = rebalance.command(List.of(words));
        if (r.exitCode() == 0) {
            windows.put((windows.size() + 1) + ". " + String.join(" ", words), r.blockedMs());
            out.printf("     writes were blocked for %d ms; steps:", r.blockedMs());
            r.stepMs().forEach((step, ms) -> out.printf(" %s %d ms", step, ms));
            out.println();
        }
        return check(r);
    }

    private boolean ran(CutoverCycles rebalance, String... words) {
        out.println("   $ rebalance " + String.join(" ", words));
        CutoverCycles.Command r = rebalance.command(List.of(words));
        if (r.exitCode() == 0) r.output().lines().filter(l -> !l.isBlank()).forEach(l -> out.println("     " + l));
        return check(r);
    }

    private boolean check(CutoverCycles.Command r) {
        if (r.exitCode() != 0) {
            out.println("     FAILED with exit " + r.exitCode() + ":");
            r.output().lines().forEach(l -> out.println("     " + l));
        }
        ok &= r.exitCode() == 0;
        return r.exitCode() == 0;
    }

    private void writes(AppSimulator app, Target target) {
        long before = app.ledger().acknowledged(target);
        app.awaitAcknowledged(target, before + WRITES_PER_PHASE, BOUND);
        out.printf(
                "   the application goes on: %,d more writes acknowledged by %s%n",
                app.ledger().acknowledged(target) - before, target);
    }

    private static Map<String, Long> postgresSeqs(AppSimulator app) {
        try {
            return app.postgresSeqs();
        } catch (SQLException e) {
            throw new IllegalStateException("reading the demo table's seqs failed: " + e.getMessage(), e);
        }
    }

    /** The problems {@code check} finds, once there are none or {@link #BOUND} has passed. */
    private static List<String> settled(Supplier<List<String>> check) throws Exception {
        AtomicReference<List<String>> problems = new AtomicReference<>();
        Poll.until( // the reverse stream reads once a second
                () -> {
                    problems.set(check.get());
                    return problems.get().isEmpty();
                },
                Duration.ofMillis(200),
                BOUND);
        return problems.get();
    }
}
