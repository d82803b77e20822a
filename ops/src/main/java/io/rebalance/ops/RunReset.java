package io.rebalance.ops;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.redis.RedisScan;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.keyspace.ResetGroup;
import io.rebalance.protocol.route.Route;
import io.rebalance.protocol.route.RouteStatus;
import io.rebalance.protocol.route.RoutingTable;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * {@code rebalance reset}: a run's Redis keys, by the keyspace's reset groups, and their deletion. DynamoDB keeps
 * what was copied; since writes are idempotent, a new run simply overwrites it. A routing entry is what every
 * WriteGuard and Router of the application reads, and a tail's offsets are where its stream resumes: forgetting
 * everything refuses while either is in use, and a group is forgotten while in use only when named.
 */
public final class RunReset {
    private final MigrationConfig config;
    private final Connections c;
    private final Keyspace keyspace;

    public RunReset(MigrationConfig config, Connections c) {
        this.config = config;
        this.c = c;
        this.keyspace = config.redis().keyspace();
    }

    /**
     * The run's keys of {@code groups}, by group, and how many keys under the prefix are another run's (whose
     * prefix starts with this one).
     */
    /** @param forgetCopy whether the copy is forgotten: its record on the Postgres fence goes too */
    public record Keys(Map<ResetGroup, List<String>> byGroup, int others, boolean forgetCopy) {
        public int total() {
            return byGroup.values().stream().mapToInt(List::size).sum();
        }
    }

    /**
     * @param everything no group was named: refused also while a route exists
     * @throws RebalanceException RUN_CONFLICT while copy processes run (copy), a tail runs (tail), or a route exists
     *     and nothing was named
     */
    /** The keys {@link #delete} would delete; nothing is refused here: see {@link #refuseWhileInUse}. */
    public Keys keys(Set<ResetGroup> groups, boolean everything) {
        Map<ResetGroup, List<String>> byGroup = new EnumMap<>(ResetGroup.class);
        int others = 0;
        for (String k : RedisScan.keys(c.redis(), keyspace.prefix())) {
            Optional<ResetGroup> group = keyspace.groupOf(k);
            if (group.isEmpty()) others++; // another run's, whose prefix starts with this one
            else byGroup.computeIfAbsent(group.get(), g -> new ArrayList<>()).add(k);
        }
        byGroup.keySet().retainAll(groups);
        return new Keys(byGroup, others, groups.contains(ResetGroup.COPY));
    }

    public void delete(Keys keys) {
        // first: a record left behind would give the forgotten copy back to the next command
        if (keys.forgetCopy()) {
            try {
                c.clearCopyRecord();
            } catch (SQLException e) {
                throw new RebalanceException(
                        ErrorCode.SOURCE_UNREACHABLE,
                        "the finished copy's record on the Postgres fence "
                                + config.cutover().pgFence()
                                + " could not be cleared (" + e.getMessage() + "); nothing was deleted: run reset"
                                + " again once Postgres answers",
                        e);
            }
        }
        for (List<String> ks : keys.byGroup().values())
            for (String k : ks) c.redis().del(k); // one by one: keys of different slots may live on different nodes
    }

    /**
     * A part may not be forgotten while its processes run (copy processes, a tail), nor everything while a route
     * exists.
     *
     * @throws RebalanceException RUN_CONFLICT saying what runs and how to end it
     */
    public void refuseWhileInUse(Set<ResetGroup> groups, boolean everything) {
        String prefix = keyspace.prefix();
        if (groups.contains(ResetGroup.COPY)) {
            var live = c.runState().liveProcesses(config.mover().leaseTtl().toMillis());
            if (!live.isEmpty()) {
                throw new RebalanceException(
                        ErrorCode.RUN_CONFLICT,
                        live.size() + " copy process(es) still run under prefix " + prefix + " ("
                                + String.join(", ", live.keySet()) + "); `rebalance stop` and end them first");
            }
        }
        if (groups.contains(ResetGroup.TAIL)) {
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
