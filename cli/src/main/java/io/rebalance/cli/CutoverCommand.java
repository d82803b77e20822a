package io.rebalance.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.cutover.Cutover;
import io.rebalance.cutover.CutoverHooks;
import io.rebalance.cutover.CutoverOutcome;
import io.rebalance.cutover.CutoverParts;
import io.rebalance.cutover.CutoverSettings;
import io.rebalance.cutover.CutoverStep;
import io.rebalance.cutover.PreCheck;
import io.rebalance.mover.RunPlanner;
import io.rebalance.ops.Connections;
import io.rebalance.ops.PartChoice;
import io.rebalance.ops.RedisChecks;
import io.rebalance.ops.cutover.CutoverChecks;
import io.rebalance.ops.cutover.CutoverVerification;
import io.rebalance.ops.cutover.RollbackProof;
import io.rebalance.ops.cutover.WindowCloseChecks;
import io.rebalance.ops.watch.Watch;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.ProcessId;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code rebalance cutover}: moves the scope's reads and writes to DynamoDB, back with {@code --rollback}, for good
 * with {@code --close-window}; {@code --prepare} installs the fences, route and stream first, {@code --dry-run}
 * prints the plan and the pre-checks, {@code --recover} repairs what a command that died left (docs/cutover.md).
 */
@Command(
        name = "cutover",
        description = "Move reads and writes of the table to DynamoDB under the exclusive lock (ADR 7). Run --prepare"
                + " once first; --dry-run shows the plan and pre-checks; --rollback moves back while the window is"
                + " open; --close-window ends it.",
        footerHeading = "%nExamples:%n",
        footer = {
            "  rebalance cutover -c migration.yaml --prepare",
            "  rebalance cutover -c migration.yaml --dry-run",
            "  rebalance cutover -c migration.yaml",
            "  rebalance cutover -c migration.yaml --rollback",
            "  rebalance cutover -c migration.yaml --close-window --yes"
        })
final class CutoverCommand implements Callable<Integer> {
    @Mixin
    ConfigOptions options;

    @Mixin
    MetricsOption metrics;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @ArgGroup(exclusive = true)
    Mode mode = new Mode();

    static final class Mode {
        @Option(names = "--prepare", description = "Install the fences, the route (SOURCE) and the target's stream.")
        boolean prepare;

        @Option(
                names = "--dry-run",
                description = "Print the steps, the pre-checks and the slots to verify; change" + " nothing.")
        boolean dryRun;

        @Option(names = "--rollback", description = "Move reads and writes back to Postgres (route TARGET only).")
        boolean rollback;

        @Option(
                names = "--close-window",
                description = "End the rollback window: the route becomes FINAL, Postgres is no longer kept current"
                        + " and rollback is refused from then on. Cannot be undone: asks for --yes.")
        boolean closeWindow;

        @Option(
                names = "--recover",
                description =
                        "Bring fences and the tail in line with the route after a" + " cutover command died mid-way.")
        boolean recover;
    }

    @Option(
            names = "--max-write-block",
            paramLabel = "DURATION",
            description = "Abort (before the flip) when writes would be blocked longer; config cutover.maxWriteBlock,"
                    + " env REBALANCE_CUTOVER_MAX_WRITE_BLOCK (default 5s).")
    Duration maxWriteBlock;

    @Option(
            names = "--verify-all",
            description = "Cutover: verify every slot inside the blocked window, instead of the changed slots before it"
                    + " and the keys written since inside it: slower, for small tables or to be sure. Rollback: when"
                    + " the log of keys written to DynamoDB since the flip is incomplete (Redis lost data or"
                    + " restarted, or it passed its cap), compare every key of both stores in the window, instead of"
                    + " before it with writes flowing; raise --max-write-block to match.")
    boolean verifyAll;

    @Option(
            names = RedisChecks.ALLOW_FLAG,
            description = "Run --prepare, the cutover or a rollback on a Redis without an append-only file: a restart"
                    + " of it loses the route and the cutover's state (docs/redis.md). The check then only warns.")
    boolean allowRedisWithoutAof;

    @Option(names = "--yes", description = "Confirm --close-window.")
    boolean yes;

    @Option(
            names = "--part",
            paramLabel = "PART",
            description = "The part of a table moved part by part (cutover.parts) that a cutover, --dry-run,"
                    + " --rollback, --close-window or --recover acts on; required there for such a table, refused for"
                    + " one moved whole (exit 39). --prepare and status take every part.")
    String part;

    @Option(
            names = "--json",
            description =
                    "Print the outcome as one JSON object (docs/cli.md#cutover---json); errors stay text on stderr.")
    boolean json;

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    /** What runs before each step: nothing, but in a test that kills the process at one (no flag for it here). */
    CutoverHooks hooks = CutoverHooks.NONE;

    @Override
    public Integer call() throws Exception {
        MigrationConfig config = options.load(metrics.into(new HashMap<>()));
        RedisOnly.require(config, "cutover", "the routing table, the readers-writers locks and the journal");
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (mode.closeWindow && !yes) {
            err.println("error: --close-window cannot be undone: the route becomes FINAL, Postgres is no longer kept"
                    + " current and `cutover --rollback` is refused from then on. Nothing was changed; run again with"
                    + " --yes to close the window. [" + ErrorCode.CONFIG_INVALID + "]");
            return ErrorCode.CONFIG_INVALID.exitCode();
        }
        Duration block = maxWriteBlock == null ? config.cutover().maxWriteBlock() : maxWriteBlock;
        String scope = config.cutover().scope();
        CutoverSettings settings = new CutoverSettings(
                scope,
                config.source().table(),
                config.target().table(),
                block,
                Duration.ofSeconds(10),
                config.cutover().applicationRoles(),
                Duration.ofSeconds(60),
                config.cutover().dynamoFenceStripes());
        try (Watch watch = Watch.start(config, "cutover");
                Connections c = new Connections(config, 8)) {
            SourceSession session = new SourceSession(config.source());
            SourceTable table = null; // close-window and recover need none: it may be gone by then
            if (!mode.closeWindow && !mode.recover) {
                table = c.sourceTableAsKept();
                new RunPlanner(config).refuseAnotherRun(c.runState(), table, c.dynamo());
            }
            PartChoice choice = PartChoice.of(config, part, !mode.prepare, c::routeStatus);
            c.refuseChangedParts(choice);
            if (mode.prepare && choice.parted()) {
                return prepareParts(c, config, settings, session, table, choice, out, err);
            }
            if (choice.part() != null) {
                // the part's own scope, fences, lock, hold and logs; the column only the trigger's install reads
                settings = settings.forPart(
                        choice.parts(), choice.part(), table == null ? null : choice.partitionColumn(table));
                scope = choice.scope();
            }
            CutoverParts parts = new CutoverParts(
                    settings,
                    c.redis(),
                    config.redis().keyspace(),
                    session,
                    c.dynamo(),
                    config.cutover().pgFence(),
                    config.cutover().dynamoFence());
            if ((mode.prepare || mode.rollback) && !admitRedis(c, config, scope, err)) {
                err.println("error: " + (mode.prepare ? "--prepare" : "rollback")
                        + " refused: the Redis it would use could lose the cutover's state. Nothing was changed. ["
                        + ErrorCode.CUTOVER_REFUSED + "]");
                return ErrorCode.CUTOVER_REFUSED.exitCode();
            }
            if (mode.prepare) {
                if (!rollbackPossible(c, table, err)) return ErrorCode.CUTOVER_REFUSED.exitCode();
                List<String> prepared = parts.prepare();
                c.keepCopyRecord(); // a copy finished before the fence existed
                if (json) {
                    Map<String, Object> v = new LinkedHashMap<>();
                    v.put("op", "prepare");
                    v.put("scope", scope);
                    v.put("prepared", prepared);
                    out.println(JSON.writeValueAsString(v));
                } else prepared.forEach(line -> out.println("prepared: " + line));
                return 0;
            }
            Cutover cutover = parts.cutover(ProcessId.create());
            cutover.hooks(watch.cutover(hooks, config));
            CutoverOutcome outcome;
            if (mode.rollback) {
                try (RollbackProof proof = new RollbackProof(config, c, table, verifyAll, choice.rows(table))) {
                    outcome = cutover.rollback(proof);
                }
            } else if (mode.closeWindow) {
                outcome = cutover.closeWindow(new WindowCloseChecks(config, c));
            } else if (mode.recover) outcome = cutover.recover();
            else {
                CutoverChecks checks = new CutoverChecks(config, c, parts, table, allowRedisWithoutAof);
                CutoverVerification verification = new CutoverVerification(config, c, table, verifyAll, choice);
                if (mode.dryRun) return dryRun(out, scope, block, checks, verification, json);
                c.keepCopyRecord(); // the copy the route is about to rely on outlives Redis from here
                outcome = cutover.cutover(checks, verification);
            }
            watch.cutoverDone(outcome);
            if (json) {
                Map<String, Object> v = new LinkedHashMap<>();
                v.put("op", outcome.op());
                v.put("scope", scope);
                v.put("blockedMs", outcome.blockedMs());
                v.put("token", outcome.token());
                v.put("detail", outcome.detail());
                Map<String, Long> steps = new LinkedHashMap<>();
                outcome.stepMs().forEach((step, ms) -> steps.put(step.name(), ms));
                v.put("stepMs", steps);
                out.println(JSON.writeValueAsString(v));
                return 0;
            }
            out.printf(
                    "%s of scope '%s' done: writes were blocked for %d ms (token %d)%n  %s%n",
                    outcome.op(), scope, outcome.blockedMs(), outcome.token(), outcome.detail());
            outcome.stepMs().forEach((step, ms) -> out.printf("  %-14s %6d ms%n", step, ms));
            return 0;
        }
    }

    /**
     * {@code --prepare} of a table moved part by part: every part's fences and route, the part triggers, the stream;
     * the same checks as a whole table's, once.
     */
    private int prepareParts(
            Connections c,
            MigrationConfig config,
            CutoverSettings settings,
            SourceSession session,
            SourceTable table,
            PartChoice choice,
            PrintWriter out,
            PrintWriter err)
            throws Exception {
        String column = choice.partitionColumn(table);
        if (!admitRedis(c, config, choice.base(), err)) {
            err.println("error: --prepare refused: the Redis it would use could lose the cutover's state. Nothing was"
                    + " changed. [" + ErrorCode.CUTOVER_REFUSED + "]");
            return ErrorCode.CUTOVER_REFUSED.exitCode();
        }
        if (!rollbackPossible(c, table, err)) return ErrorCode.CUTOVER_REFUSED.exitCode();
        Map<String, List<String>> prepared = new LinkedHashMap<>();
        // parts one after another, each whole: a part prepared is one the trigger, fences and route agree on
        for (String name : choice.parts().names()) {
            CutoverSettings one = settings.forPart(choice.parts(), name, column);
            prepared.put(
                    name,
                    new CutoverParts(
                                    one,
                                    c.redis(),
                                    config.redis().keyspace(),
                                    session,
                                    c.dynamo(),
                                    config.cutover().pgFence(),
                                    config.cutover().dynamoFence())
                            .prepare());
        }
        c.keepCopyRecord(); // a copy finished before the fences existed
        if (json) {
            Map<String, Object> v = new LinkedHashMap<>();
            v.put("op", "prepare");
            v.put("scope", choice.base());
            // "prepared" as for a table moved whole (each line named by its part), and the same lines by part
            v.put(
                    "prepared",
                    prepared.entrySet().stream()
                            .flatMap(p -> p.getValue().stream().map(line -> p.getKey() + ": " + line))
                            .toList());
            v.put("parts", prepared);
            out.println(JSON.writeValueAsString(v));
        } else {
            prepared.forEach((name, lines) -> lines.forEach(line -> out.println("prepared " + name + ": " + line)));
        }
        return 0;
    }

    /**
     * For {@code --prepare} and {@code --rollback}, which have no pre-check list of their own: prints the failed
     * checks and returns false when the command must refuse; prints the accepted risk as a warning otherwise.
     */
    private boolean admitRedis(Connections c, MigrationConfig config, String scope, PrintWriter err) {
        List<PreCheck> checks = RedisChecks.run(c.redis(), config.redis(), scope, allowRedisWithoutAof);
        checks.stream().filter(p -> !p.passed()).forEach(err::println);
        checks.stream().filter(RedisChecks::riskAccepted).forEach(p -> err.println("warning: " + p.detail()));
        return checks.stream().allMatch(PreCheck::passed);
    }

    private static int dryRun(
            PrintWriter out,
            String scope,
            Duration block,
            CutoverChecks checks,
            CutoverVerification verification,
            boolean json)
            throws Exception {
        List<PreCheck> preChecks = checks.run();
        boolean ok = preChecks.stream().allMatch(PreCheck::passed);
        int code = ok ? 0 : ErrorCode.CUTOVER_REFUSED.exitCode();
        if (json) {
            Map<String, Object> v = new LinkedHashMap<>();
            v.put("op", "dry-run");
            v.put("scope", scope);
            v.put("maxWriteBlockMs", block.toMillis());
            List<Map<String, String>> steps = new ArrayList<>();
            for (CutoverStep s : Cutover.CUTOVER_STEPS) steps.add(Map.of("step", s.name(), "what", s.what()));
            v.put("steps", steps);
            List<Map<String, Object>> pre = new ArrayList<>();
            for (PreCheck p : preChecks) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("name", p.name());
                m.put("passed", p.passed());
                m.put("detail", p.detail());
                pre.add(m);
            }
            v.put("preChecks", pre);
            v.put("slotsToVerify", verification.changed().size());
            v.put("slotsVerifiedInWindow", verification.slotsInWindow());
            v.put("wouldRun", ok);
            out.println(JSON.writeValueAsString(v));
            return code;
        }
        out.println(
                "cutover of scope '" + scope + "' would run, blocking writes for at most " + block.toMillis() + " ms:");
        for (CutoverStep s : Cutover.CUTOVER_STEPS) out.printf("  %-14s %s%n", s, s.what());
        out.println("pre-checks:");
        preChecks.forEach(p -> out.println("  " + p));
        out.println((verification.slotsInWindow()
                        ? "slots to verify in the window: "
                        : "slots to verify before the window: ")
                + verification.changed().size());
        out.println(ok ? "all pre-checks pass" : "the cutover would be refused");
        return code;
    }

    /**
     * Whether the reverse stream could write {@code table} back, so a cutover could be rolled back; refuses {@code
     * --prepare} on {@code err} when not: a rollback is proven possible before the flip, not found impossible after it.
     */
    private static boolean rollbackPossible(Connections c, SourceTable table, PrintWriter err) throws Exception {
        List<String> unwritable = c.reverseWriteProblems(table);
        if (unwritable.isEmpty()) return true;
        err.println("error: --prepare refused: the reverse stream could not write " + table.name()
                + " back, so a cutover could not be rolled back: " + String.join("; and ", unwritable)
                + ". Nothing was changed. [" + ErrorCode.CUTOVER_REFUSED + "]");
        return false;
    }
}
