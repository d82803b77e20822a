package io.rebalance.cli;

import io.rebalance.cdc.Tail;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.dynamo.TargetTable;
import io.rebalance.core.source.SourceTable;
import io.rebalance.mover.RunPlanner;
import io.rebalance.ops.Connections;
import io.rebalance.ops.RedisChecks;
import io.rebalance.ops.SlotDrop;
import io.rebalance.ops.watch.Watch;
import io.rebalance.protocol.ProcessId;
import java.io.PrintWriter;
import java.util.HashMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code rebalance tail}: streams every change of the source table into DynamoDB until stopped (docs/cdc.md). Run
 * it in two processes: one applies, the other stands by and takes over within {@code tail.leaseTtl}.
 * {@code --drop-slot} removes the replication slot and publication once the migration no longer needs them.
 */
@Command(
        name = "tail",
        description = "Stream inserts, updates and deletes of the source table into DynamoDB (Debezium, pgoutput)."
                + " One process applies, others stand by. --drop-slot cleans up the replication slot.",
        footerHeading = "%nExamples:%n",
        footer = {
            "  rebalance tail -c migration.yaml --create-table   # start it before the copy",
            "  rebalance tail -c migration.yaml --drop-slot       # after the migration"
        })
final class TailCommand implements Callable<Integer> {
    @Mixin
    ConfigOptions options;

    @Mixin
    MetricsOption metrics;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(
            names = "--drop-slot",
            description = "Drop the replication slot and publication and forget the saved offsets, then exit."
                    + " Refused while a tail holds the lease.")
    boolean dropSlot;

    @Option(
            names = "--create-table",
            description = "Create the DynamoDB table (with the slot index) if it does not exist, as copy does.")
    boolean createTable;

    @Override
    public Integer call() throws Exception {
        MigrationConfig config = options.load(metrics.into(new HashMap<>()));
        RedisOnly.require(config, "tail", "its lease, its position and the keys it wrote");
        PrintWriter out = spec.commandLine().getOut();
        try (Watch watch = dropSlot ? Watch.off() : Watch.start(config, "tail");
                Connections c = new Connections(config, config.tail().applyThreads() + 4)) {
            if (dropSlot) return dropSlot(config, c, out);
            RedisChecks.volatileWarning(
                            c.redis(),
                            config.redis(),
                            "the tail resumes from its replication slot, but its record of the keys it wrote while"
                                    + " their slots were being copied is lost, so a copy may overwrite newer changes:"
                                    + " run `rebalance verify --all --repair` after such a restart")
                    .ifPresent(spec.commandLine().getErr()::println);
            SourceTable table = c.sourceTable();
            new RunPlanner(config).refuseAnotherRun(c.runState(), table, c.dynamo()); // before creating anything
            if (createTable && !TargetTable.exists(c.dynamo(), config.target().table(), c.dynamoWhere())) {
                TargetTable.create(c.dynamo(), config.target().table(), table.key(), SlotIndex.of(config.target()));
            }
            c.checkTarget(table);
            String owner = ProcessId.create();
            CountDownLatch done = new CountDownLatch(1);
            try (Tail tail = new Tail(config, table, c.dynamo(), c.redis(), owner)) {
                watch.tail(tail, config);
                Thread hook = new Thread(
                        () -> {
                            tail.close();
                            try {
                                done.await(15, TimeUnit.SECONDS); // let the last batch land and the lease go
                            } catch (InterruptedException ignored) {
                                Thread.currentThread().interrupt();
                            }
                        },
                        "rebalance-tail-shutdown");
                Runtime.getRuntime().addShutdownHook(hook);
                out.println("tail " + owner + ": slot " + config.tail().slotName() + ", publication "
                        + config.tail().publication() + "; Ctrl-C stops it");
                out.flush();
                try {
                    tail.run();
                } finally {
                    done.countDown();
                }
            }
        }
        return 0;
    }

    private int dropSlot(MigrationConfig config, Connections c, PrintWriter out) throws Exception {
        SlotDrop.run(config, c, out::println);
        return 0;
    }
}
