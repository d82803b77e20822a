package io.rebalance.cli;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.copy.RunStatus;
import io.rebalance.core.refused.RefusedRows;
import io.rebalance.mover.MoverProcess;
import io.rebalance.mover.RunPlanner;
import io.rebalance.mover.RunState;
import io.rebalance.ops.Connections;
import io.rebalance.ops.RedisChecks;
import io.rebalance.ops.watch.Watch;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.io.PrintWriter;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code rebalance copy}: joins (or starts) the run and copies slots until every slot is finished. Start it in as many
 * processes as you like; they share the work through the run's coordinator (Redis, or Postgres tables). SIGTERM or
 * Ctrl-C stops it cleanly: workers finish their page, save progress and release their slots, so another process
 * continues at once.
 */
@Command(
        name = "copy",
        description = "Copy slots into DynamoDB until the run is FINISHED. Run it in as many processes as you like.",
        footerHeading = "%nExamples:%n",
        footer = {
            "  rebalance copy -c migration.yaml --create-table   # the first creates the table",
            "  rebalance copy -c migration.yaml --workers 16 --rate 5000",
            "  REBALANCE_CONFIG=migration.yaml rebalance copy --no-progress"
        })
final class CopyCommand implements Callable<Integer> {
    @Mixin
    ConfigOptions options;

    @Mixin
    MetricsOption metrics;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--create-table", description = "Create the DynamoDB table (pay per request) if it does not exist.")
    boolean createTable;

    @Option(
            names = "--workers",
            paramLabel = "N",
            description =
                    "Worker threads in this process; config mover.workers, env REBALANCE_MOVER_WORKERS (default 8).")
    Integer workers;

    @Option(
            names = "--rate",
            paramLabel = "ROWS_PER_SECOND",
            description = "Rows per second for the whole run, all processes together, 0 for no limit; config"
                    + " mover.rateLimit, env REBALANCE_MOVER_RATE_LIMIT (default 0).")
    Long rate;

    @Option(
            names = "--no-concurrent-writers",
            description = "Copy without a change stream: only when nothing writes to the source table until cutover."
                    + " Without it, copy refuses to start unless the tail's replication slot and publication exist.")
    boolean noConcurrentWriters;

    @Option(names = "--no-progress", description = "Log lines instead of a progress bar, even on a terminal.")
    boolean noProgress;

    @Option(
            names = "--accept-schema",
            description = "The source table's columns changed since the run was planned (exit 35): record them as"
                    + " they are now and copy on; then `rebalance verify --all --repair` rewrites the rows copied"
                    + " before (docs/schema-changes.md).")
    boolean acceptSchema;

    /** Refused rows named in the summary; the rest are counted (status lists them all). */
    private static final int SHOWN = 10;

    @Override
    public Integer call() throws Exception {
        Map<String, String> extra = new HashMap<>();
        if (workers != null) extra.put("mover.workers", workers.toString());
        if (rate != null) extra.put("mover.rateLimit", rate.toString());
        MigrationConfig config = options.load(metrics.into(extra));
        CountDownLatch stopped = new CountDownLatch(1);
        try (Watch watch = Watch.start(config, "copy"); // first: a port it cannot serve on fails before any write
                Connections c = new Connections(config, config.mover().workers() + 6)) {
            if (!noConcurrentWriters && config.mover().coordinatedByPostgres()) {
                throw new RebalanceException(
                        ErrorCode.NO_CHANGE_STREAM,
                        "mover.coordinator: postgres copies only a table nothing writes to: no tail runs beside it, so"
                                + " a write made during the copy would never reach DynamoDB. If nothing writes to "
                                + config.source().table() + " until the migration ends, say so: `rebalance copy"
                                + " --no-concurrent-writers`; if applications still write it, set mover.coordinator:"
                                + " redis and start `rebalance tail` first (docs/mover.md#choosing-a-coordinator)");
            }
            if (!noConcurrentWriters) c.checkCopyCoverage(); // before anything is planned or created
            if (!config.mover().coordinatedByPostgres())
                RedisChecks.volatileWarning(
                                c.redis(),
                                config.redis(),
                                "the copy's progress is lost and it starts over (rows are copied again, none is lost),"
                                        + " and the tail's record of keys it wrote during the copy is lost too: run"
                                        + " `rebalance verify --all --repair` after such a restart")
                        .ifPresent(spec.commandLine().getErr()::println);
            // the one rule for every write of Postgres rows into DynamoDB: only while Postgres is the store of record
            c.storeOfRecord()
                    .requirePostgres(
                            "copy",
                            "The copy ends when the route leaves SOURCE: to copy again, roll back first (`rebalance"
                                    + " cutover --rollback`, while the rollback window is open), then copy.");
            RunState run = c.runState();
            var prepared = new RunPlanner(config).prepare(run, c.dynamo(), c.dynamoWhere(), createTable, acceptSchema);
            if (prepared.accepted().isPresent()) {
                // items verified before are in the old shape: every slot must be verified again before a cutover
                c.verifications().forgetAll();
                spec.commandLine()
                        .getErr()
                        .println("accepted: " + prepared.accepted().get() + ". The run goes on with the table as it is"
                                + " now; earlier verifications are forgotten. Once the copy is FINISHED, run `rebalance"
                                + " verify --all --repair` to rewrite the rows copied before");
            }
            RunStatus status = run.compareAndSet(RunStatus.NOT_STARTED, RunStatus.TO_START);
            if (status == RunStatus.FINISHED) {
                spec.commandLine()
                        .getOut()
                        .println("run " + where(c) + " is already FINISHED; nothing to copy (`rebalance reset` forgets"
                                + " it to copy again)");
                return 0;
            }
            MoverProcess process = c.moverProcess(prepared);
            watch.copy(process, config, run);
            Thread hook = new Thread(
                    () -> {
                        process.shutdown();
                        try {
                            stopped.await(20, TimeUnit.SECONDS); // let workers save progress and release their slots
                        } catch (InterruptedException ignored) {
                            Thread.currentThread().interrupt();
                        }
                    },
                    "rebalance-shutdown");
            Runtime.getRuntime().addShutdownHook(hook);
            RunStatus end;
            try (ProgressReporter progress =
                    ProgressReporter.start(run, spec.commandLine().getOut(), !noProgress)) {
                end = process.run();
                progress.finish(end);
            } finally {
                stopped.countDown();
            }
            if (process.schemaChange().isPresent()) {
                RebalanceException e = RunPlanner.schemaChanged(
                        prepared.table().name(), process.schemaChange().get());
                spec.commandLine().getErr().println("error: " + e.getMessage() + " [" + e.code() + "]");
                return e.code().exitCode();
            }
            if (end == RunStatus.FINISHED) {
                // on the Postgres fence, if installed: a Redis that loses the run gets it back
                if (!config.mover().coordinatedByPostgres()) c.keepCopyRecord();
                return refusedSummary(c.refusedRows());
            }
        }
        return 0;
    }

    /** {@code under prefix mgre:}, or {@code in schema rebalance of Postgres at ...}. */
    static String where(Connections c) {
        return c.config().mover().coordinatedByPostgres()
                ? "in " + c.coordinator().where()
                : "under prefix " + c.config().redis().keyspace().prefix();
    }

    /** Rows listed as refused make the copy incomplete: say which, why, and the ways out (exit 21). */
    private int refusedSummary(RefusedRows refused) {
        List<RefusedRows.Refusal> all = refused.all();
        if (all.isEmpty()) return 0;
        PrintWriter err = spec.commandLine().getErr();
        err.printf(
                "copied except %d refused row%s: DynamoDB cannot hold %s as mapped, so %s not written and the"
                        + " cutover refuses until none is listed. [%s]%n",
                all.size(),
                all.size() == 1 ? "" : "s",
                all.size() == 1 ? "it" : "them",
                all.size() == 1 ? "it was" : "they were",
                ErrorCode.ROW_REFUSED);
        all.stream()
                .limit(SHOWN)
                .forEach(r -> err.printf(
                        "  id %s (slot %s)%s: %s%n",
                        r.id(),
                        r.slot().isEmpty() ? "none" : r.slot(),
                        r.column().isEmpty() ? "" : " column " + r.column(),
                        r.reason()));
        if (all.size() > SHOWN)
            err.printf("  ... and %d more: `rebalance status` lists them all%n", all.size() - SHOWN);
        err.println("next: fix the rows, or the settings that map them (target.jsonAsString or"
                + " target.numbersAsString store a column's values as their text; source.columns leaves a column"
                + " out; docs/codec.md), then `rebalance verify --retry-refused` writes exactly these rows again");
        return ErrorCode.ROW_REFUSED.exitCode();
    }
}
