package io.rebalance.cli;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.mover.postgres.PostgresCoordinator;
import io.rebalance.ops.Connections;
import io.rebalance.ops.RunReset;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.keyspace.ResetGroup;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code rebalance reset}: forgets a run's state in Redis, by part ({@link RunReset} says what and when). */
@Command(
        name = "reset",
        description = "Forget the run under the prefix (Redis keys, or with mover.coordinator: postgres the run's rows"
                + " in the coordinator's tables; DynamoDB and the source table stay). Without --yes, only says"
                + " what it would delete.",
        footerHeading = "%nExamples:%n",
        footer = {
            "  rebalance reset -c migration.yaml                  # what would be deleted",
            "  rebalance reset -c migration.yaml --yes            # everything, when no route exists and no tail runs",
            "  rebalance reset -c migration.yaml --forget copy --yes   # copy again; the tail and the route stay"
        })
final class ResetCommand implements Callable<Integer> {
    /** The parts of a run's state, as the keyspace groups its keys. */
    enum Part {
        /** The copy's plan, progress, slot leases, keeper, rate limit, verifications and refused rows. */
        copy(ResetGroup.COPY),
        /** The change stream's offsets, lease, repair queue, key logs and hand-off state. */
        tail(ResetGroup.TAIL),
        /** The routing entries, their locks, the cutover's journal and the target-write log. */
        route(ResetGroup.ROUTE);

        private final ResetGroup group;

        Part(ResetGroup group) {
            this.group = group;
        }
    }

    @Mixin
    ConfigOptions options;

    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--yes", description = "Really delete; without it, only say what would be deleted.")
    boolean yes;

    @Option(
            names = "--forget",
            split = ",",
            paramLabel = "PART",
            description = "Forget only these parts (${COMPLETION-CANDIDATES}): copy (plan, progress,"
                    + " verifications, refused rows; refused while copy processes run), tail (offsets and hand-off"
                    + " state; refused while a tail runs), route (the cutover's routing entries, locks and journal)."
                    + " Default: all three, also refused while a route exists.")
    Set<Part> forget;

    @Override
    public Integer call() {
        MigrationConfig config = options.load();
        String prefix = config.redis().keyspace().prefix();
        boolean everything = forget == null || forget.isEmpty();
        Set<Part> parts = everything ? EnumSet.allOf(Part.class) : EnumSet.copyOf(forget);
        Set<ResetGroup> groups = EnumSet.noneOf(ResetGroup.class);
        parts.forEach(p -> groups.add(p.group));
        try (Connections c = new Connections(config, 2)) {
            if (c.coordinator() instanceof PostgresCoordinator pg) return forget(c, pg, parts);
            RunReset reset = new RunReset(config, c);
            RunReset.Keys keys = reset.keys(groups, everything);
            String byPart = parts.stream()
                    .map(p -> p + " "
                            + keys.byGroup().getOrDefault(p.group, List.of()).size())
                    .collect(Collectors.joining(", "));
            String kept =
                    keys.others() == 0 ? "" : "; " + keys.others() + " keys under it of another run's prefix stay";
            var out = spec.commandLine().getOut();
            if (!yes) { // a dry run only counts, whatever runs, and says when --yes would be refused
                String refused = "";
                try {
                    reset.refuseWhileInUse(groups, everything);
                } catch (RebalanceException e) {
                    refused = "; --yes is refused while " + e.getMessage();
                }
                out.println("would delete " + keys.total() + " keys under " + prefix + " (" + byPart + ")" + kept
                        + (refused.isEmpty() ? "; run again with --yes" : refused));
                return 0;
            }
            reset.refuseWhileInUse(groups, everything);
            reset.delete(keys);
            out.println("deleted " + keys.total() + " keys under " + prefix + " (" + byPart + ")" + kept
                    + "; DynamoDB and Postgres data are untouched");
            return 0;
        }
    }

    /**
     * The run in the Postgres coordinator's tables: only the copy has state there (neither a tail nor a cutover runs
     * without Redis), so {@code tail} and {@code route} have nothing to forget.
     */
    private int forget(Connections c, PostgresCoordinator pg, Set<Part> parts) {
        var out = spec.commandLine().getOut();
        boolean copy = parts.contains(Part.copy);
        long rows = copy ? pg.forget(true) : 0;
        String byPart =
                parts.stream().map(p -> p + " " + (p == Part.copy ? rows : 0)).collect(Collectors.joining(", "));
        Map<String, String> live =
                copy ? c.runState().liveProcesses(c.config().mover().leaseTtl().toMillis()) : Map.<String, String>of();
        String running = live.isEmpty()
                ? ""
                : live.size() + " copy process(es) still run in " + pg.where() + " (" + String.join(", ", live.keySet())
                        + "); `rebalance stop` and end them first";
        if (!yes) {
            out.println("would delete " + rows + " rows in " + pg.where() + " (" + byPart + ")"
                    + (running.isEmpty() ? "; run again with --yes" : "; --yes is refused while " + running));
            return 0;
        }
        if (!running.isEmpty()) throw new RebalanceException(ErrorCode.RUN_CONFLICT, running);
        long deleted = copy ? pg.forget(false) : 0;
        out.println("deleted " + deleted + " rows in " + pg.where() + " (" + byPart + "); DynamoDB and the source"
                + " table are untouched");
        return 0;
    }
}
