package io.rebalance.cli;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.redis.RedisScan;
import io.rebalance.ops.Connections;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.keyspace.ResetGroup;
import io.rebalance.protocol.route.Route;
import io.rebalance.protocol.route.RouteStatus;
import io.rebalance.protocol.route.RoutingTable;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code rebalance reset}: forgets a run's state in Redis, by part. DynamoDB keeps what was copied; since writes are
 * idempotent, a new run simply overwrites it. A routing entry is what every WriteGuard and Router of the application
 * reads, and a tail's offsets are where its stream resumes: forgetting everything refuses while either is in use, and
 * a part is forgotten while in use only when named.
 */
@Command(
        name = "reset",
        description = "Forget the run under the prefix (Redis keys only; DynamoDB and Postgres data stay). Without"
                + " --yes, only says what it would delete.",
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

        static Part of(ResetGroup group) {
            for (Part p : values()) if (p.group == group) return p;
            throw new IllegalArgumentException(group.name());
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
            description = "Forget only these parts (${COMPLETION-CANDIDATES}), even while in use: copy (plan,"
                    + " progress, verifications, refused rows), tail (offsets and hand-off state), route (the"
                    + " cutover's routing entries, locks and journal). Default: all three, refused while a route"
                    + " exists or a tail runs.")
    Set<Part> forget;

    @Override
    public Integer call() {
        MigrationConfig config = options.load();
        Keyspace keyspace = config.redis().keyspace();
        String prefix = keyspace.prefix();
        Set<Part> parts = forget == null || forget.isEmpty() ? EnumSet.allOf(Part.class) : EnumSet.copyOf(forget);
        try (Connections c = new Connections(config, 2)) {
            refuseWhileInUse(c, config, keyspace, parts, forget == null || forget.isEmpty());
            Map<Part, List<String>> keys = new EnumMap<>(Part.class);
            int others = 0;
            for (String k : RedisScan.keys(c.redis(), prefix)) {
                Optional<ResetGroup> group = keyspace.groupOf(k);
                if (group.isEmpty()) others++; // another run's, whose prefix starts with this one
                else
                    keys.computeIfAbsent(Part.of(group.get()), p -> new ArrayList<>())
                            .add(k);
            }
            keys.keySet().retainAll(parts);
            int total = keys.values().stream().mapToInt(List::size).sum();
            String byPart = parts.stream()
                    .map(p -> p + " " + keys.getOrDefault(p, List.of()).size())
                    .collect(Collectors.joining(", "));
            String kept = others == 0 ? "" : "; " + others + " keys under it of another run's prefix stay";
            var out = spec.commandLine().getOut();
            if (!yes) {
                out.println("would delete " + total + " keys under " + prefix + " (" + byPart + ")" + kept
                        + "; run again with --yes");
                return 0;
            }
            for (List<String> ks : keys.values())
                for (String k : ks)
                    c.redis().del(k); // one by one: keys of different slots may live on different cluster nodes
            out.println("deleted " + total + " keys under " + prefix + " (" + byPart + ")" + kept
                    + "; DynamoDB and Postgres data are untouched");
            return 0;
        }
    }

    private static void refuseWhileInUse(
            Connections c, MigrationConfig config, Keyspace keyspace, Set<Part> parts, boolean everything) {
        String prefix = keyspace.prefix();
        if (parts.contains(Part.copy)) {
            var live =
                    c.runState().liveProcesses(config.mover().leaseTtlDuration().toMillis());
            if (!live.isEmpty()) {
                throw new RebalanceException(
                        ErrorCode.RUN_CONFLICT,
                        live.size() + " copy process(es) still run under prefix " + prefix + " ("
                                + String.join(", ", live.keySet()) + "); `rebalance stop` and end them first");
            }
        }
        if (parts.contains(Part.tail)) {
            String holder = c.redis().get(keyspace.tail().lease()); // the lease expires with its holder
            if (holder != null) {
                throw new RebalanceException(
                        ErrorCode.RUN_CONFLICT,
                        "a tail runs under prefix " + prefix + " (" + holder + "); forgetting its offsets under it"
                                + " would lose its place: stop it (Ctrl-C or SIGTERM) first");
            }
        }
        if (everything) {
            RoutingTable routes = new RoutingTable(c.redis(), keyspace);
            for (String scope : routes.scopes()) {
                Optional<Route> route = routes.get(scope);
                if (route.isEmpty()) continue;
                RouteStatus s = route.get().status();
                throw new RebalanceException(
                        ErrorCode.RUN_CONFLICT,
                        "scope '" + scope + "' has a route (" + s
                                + (s == RouteStatus.TARGET ? ": DynamoDB serves and the rollback window is open" : "")
                                + "), which every WriteGuard and Router of the application reads; forgetting it makes"
                                + " their calls fail. Name what to forget: --forget copy (copy again), or"
                                + " --forget copy,tail,route once no application uses the route");
            }
        }
    }
}
