package io.rebalance.cutover;

import io.rebalance.core.dynamo.TargetTable;
import io.rebalance.core.redis.ReplicaWait;
import io.rebalance.core.source.SourceSession;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.fence.DynamoFence;
import io.rebalance.protocol.fence.FenceTrigger;
import io.rebalance.protocol.fence.PostgresFence;
import io.rebalance.protocol.handoff.BypassedWrites;
import io.rebalance.protocol.handoff.ForwardHold;
import io.rebalance.protocol.handoff.TargetWriteLog;
import io.rebalance.protocol.keyspace.HandoffKeys;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.keyspace.ScopeKeys;
import io.rebalance.protocol.lock.SharedExclusiveLock;
import io.rebalance.protocol.route.FencedRoute;
import io.rebalance.protocol.route.Route;
import io.rebalance.protocol.route.RoutingTable;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;

/** The pieces one scope's cutover works on, wired once: what {@code --prepare} installs and every command uses. */
public final class CutoverParts {
    private final AtomicReference<String> keyAttributes = new AtomicReference<>();
    private final CutoverSettings settings;
    private final UnifiedJedis redis;
    private final SourceSession session;
    private final DynamoDbClient dynamo;
    private final PostgresFence pgFence;
    private final DynamoFence dynamoFence;
    private final ScopeKeys scopeKeys;
    private final HandoffKeys handoff;
    private final RoutingTable routes;

    public CutoverParts(
            CutoverSettings settings,
            UnifiedJedis redis,
            Keyspace keyspace,
            SourceSession session,
            DynamoDbClient dynamo,
            String pgFenceTable,
            String dynamoFenceTable) {
        this.settings = settings;
        this.redis = redis;
        this.session = session;
        this.dynamo = dynamo;
        this.pgFence = new PostgresFence(pgFenceTable);
        this.dynamoFence = new DynamoFence(dynamo, dynamoFenceTable);
        this.scopeKeys = keyspace.scope(settings.scope());
        // a part has its own hold, key log and bypassing writes; the reverse stream's keys stay the table's
        this.handoff = settings.part() == null
                ? keyspace.handoff()
                : keyspace.handoff().part(settings.part().name());
        this.routes = new RoutingTable(redis, keyspace);
    }

    /**
     * Installs what applications and the cutover need, idempotently: both fences (Postgres open to applications,
     * DynamoDB closed), the route (SOURCE), and the target table's stream for the reverse stream. Fences installed
     * before are kept, and Redis must agree with them: a route Redis lost is rebuilt from fences that are aligned to
     * the route they recorded; otherwise it refuses and names {@code --recover} (ADR 8).
     *
     * @return what was done, one line each
     * @throws RebalanceException CUTOVER_REFUSED when Redis and the fences disagree
     */
    public List<String> prepare() throws Exception {
        try {
            dynamo.describeTable(b -> b.tableName(settings.targetTable()));
        } catch (ResourceNotFoundException e) {
            throw new RebalanceException(
                    ErrorCode.TARGET_TABLE_MISSING,
                    "DynamoDB table '" + settings.targetTable() + "' (target.table) does not exist, so there is nothing"
                            + " to cut over to: copy first (`rebalance copy --create-table`), then run --prepare."
                            + " Nothing was changed.");
        }
        List<String> done = new ArrayList<>();
        try (Connection c = session.open()) {
            c.setAutoCommit(false); // a fence an application role could reopen is not installed at all
            try {
                FenceTrigger trigger = pgFence.trigger();
                // every flip enables or disables it, as this role: the cutover needs what --prepare needs
                List<String> missing = trigger.missingPrivileges(c, settings.sourceTable());
                if (!missing.isEmpty()) throw triggerRefused(missing);
                pgFence.install(c, settings.scope());
                done.add("Postgres fence " + pgFence.table() + " has scope '" + settings.scope() + "'");
                installTrigger(c, trigger);
                done.add(
                        settings.part() == null
                                ? "trigger " + trigger.name() + " on " + settings.sourceTable()
                                        + " (and its partitions),"
                                        + " enabled while the fence is closed: Postgres then refuses every write there,"
                                        + " whoever makes it"
                                : "triggers " + trigger.parts().name() + " on " + settings.sourceTable() + " (and its"
                                        + " partitions), enabled while any part's fence is closed: Postgres then refuses every"
                                        + " write to that part's rows, whoever makes it, and takes every other part's");
                done.add(grantChecks(c));
                c.commit();
            } catch (Exception e) {
                c.rollback();
                throw e;
            }
        }
        dynamoFence.install(settings.scope(), settings.fenceStripes());
        done.add("DynamoDB fence table " + dynamoFence.table() + " has scope '" + settings.scope() + "'");
        FencedRoute fenced = alignment().fenced().orElseThrow();
        lock().seedTokens(fenced.highWater());
        Optional<Route> route = routes.get(settings.scope());
        if (!fenced.aligned()
                || (route.isPresent() && fenced.supersedes(route))
                || (route.isPresent() && route.get().status() != fenced.status())) {
            throw new RebalanceException(
                    ErrorCode.CUTOVER_REFUSED,
                    "the route in Redis ("
                            + route.map(r -> r.status() + ", epoch " + r.epoch())
                                    .orElse("none")
                            + ") and the fences (" + fenced.detail() + ") disagree: a cutover command stopped mid-way,"
                            + " or Redis lost its data. Run `" + settings.recoverCommand()
                            + "`, which aligns the stores"
                            + " and rebuilds the route from the fences. The route was not changed.");
        }
        if (route.isEmpty() && fenced.epoch() > 1) {
            Route rebuilt = routes.create(settings.scope(), fenced.status(), fenced.epoch());
            done.add("route: " + rebuilt.status() + ", epoch " + rebuilt.epoch()
                    + " (rebuilt from the fences: Redis had no route, so it lost its data)");
        } else {
            done.add("route: "
                    + routes.create(settings.scope(), fenced.status(), fenced.epoch())
                            .status());
        }
        boolean enabled = TargetTable.enableStream(dynamo, settings.targetTable());
        done.add("stream of " + settings.targetTable() + (enabled ? " enabled" : " already enabled")
                + " (the reverse stream of `rebalance tail` reads it)");
        return done;
    }

    /**
     * Grants the application roles SELECT on the fence, then proves none of them can change it (ADR 7: a role that
     * could would reopen the fence under a cutover).
     *
     * @throws RebalanceException CUTOVER_REFUSED naming each unfit role and its fix
     */
    private String grantChecks(Connection c) throws SQLException {
        List<String> roles = settings.applicationRoles();
        if (roles.isEmpty()) {
            return "application roles not checked: set cutover.applicationRoles to the Postgres roles your"
                    + " applications write as, and --prepare grants them SELECT on the fence and refuses any that"
                    + " could change it (docs/cutover.md, \"Grants\")";
        }
        Map<String, String> missing = pgFence.roles().unfitRoles(c, roles);
        for (String role : roles) {
            if (!"no such role".equals(missing.get(role))) pgFence.roles().grantCheck(c, role);
        }
        Map<String, String> unfit = pgFence.roles().unfitRoles(c, roles);
        if (!unfit.isEmpty()) throw unfitRoles(unfit, pgFence.table());
        return "application roles " + String.join(", ", roles) + " may read " + pgFence.table()
                + " (to check it) and not change it";
    }

    /** Installs the trigger, refusing with the way on when a long transaction holds the table past the wait. */
    private void installTrigger(Connection c, FenceTrigger trigger) throws SQLException {
        try {
            CutoverSettings.Part part = settings.part();
            if (part == null) trigger.install(c, settings.sourceTable(), settings.scope());
            else trigger.parts().install(c, settings.sourceTable(), part.base(), part.parts(), part.column());
        } catch (SQLException e) {
            if (!"55P03".equals(e.getSQLState())) throw e; // lock_not_available
            throw new RebalanceException(
                    ErrorCode.CUTOVER_REFUSED,
                    "the fence's trigger could not be put on " + settings.sourceTable() + ": a transaction held the"
                            + " table for more than 5 s (" + e.getMessage() + "), and writers would queue behind the"
                            + " wait. Run --prepare again once it ends (pg_stat_activity shows it). Nothing was"
                            + " changed.",
                    e);
        }
    }

    /** The refusal for a role that may not install the fence's trigger; names each grant missing. */
    private RebalanceException triggerRefused(List<String> missing) {
        return new RebalanceException(
                ErrorCode.CUTOVER_REFUSED,
                "the fence's trigger cannot be installed on " + settings.sourceTable() + ": "
                        + String.join("; ", missing)
                        + ". Without it Postgres would take writes that bypass WriteGuard after the flip, and"
                        + " lose them. Nothing was changed.");
    }

    /**
     * The pre-check that the fence's trigger guards the table and every partition of it, enabled ALWAYS: a partition
     * attached since {@code --prepare}, or a trigger someone disabled, would let writes past the fence.
     */
    public PreCheck fenceTrigger() {
        try (Connection c = session.open()) {
            FenceTrigger trigger = pgFence.trigger();
            List<String> gaps = new ArrayList<>(
                    settings.part() == null
                            ? trigger.gaps(c, settings.sourceTable(), settings.scope())
                            : trigger.parts().gaps(c, settings.sourceTable(), settings.scope()));
            gaps.addAll(trigger.missingPrivileges(c, settings.sourceTable()));
            if (gaps.isEmpty()) {
                return PreCheck.pass(
                        "fence trigger",
                        trigger.name() + " on " + settings.sourceTable() + ", enabled as the fence closes: Postgres"
                                + " then refuses writes that bypass the guard");
            }
            return PreCheck.fail(
                    "fence trigger",
                    String.join("; ", gaps) + ": writes that bypass WriteGuard would be taken by Postgres after the"
                            + " flip, and lost; fix the grant, or run `rebalance cutover --prepare` again");
        } catch (SQLException e) {
            return PreCheck.fail("fence trigger", "could not be read: " + e.getMessage());
        }
    }

    /** The cutover's pre-check of the same: grants may have changed since --prepare. */
    public PreCheck fenceGrants() {
        List<String> roles = settings.applicationRoles();
        if (roles.isEmpty()) return PreCheck.pass("fence grants", "not checked (cutover.applicationRoles is empty)");
        try (Connection c = session.open()) {
            Map<String, String> unfit = pgFence.roles().unfitRoles(c, roles);
            if (unfit.isEmpty()) {
                return PreCheck.pass(
                        "fence grants", String.join(", ", roles) + " may read " + pgFence.table() + ", not change it");
            }
            return PreCheck.fail(
                    "fence grants",
                    unfitRoles(unfit, pgFence.table()).getMessage().replace(" Nothing was changed.", ""));
        } catch (SQLException e) {
            return PreCheck.fail("fence grants", "could not be read: " + e.getMessage());
        }
    }

    /** The refusal for roles that could reopen the fence or cannot check it; names each and what to do. */
    public static RebalanceException unfitRoles(Map<String, String> unfit, String table) {
        List<String> each = new ArrayList<>();
        unfit.forEach((role, why) -> each.add(role + " " + why));
        return new RebalanceException(
                ErrorCode.CUTOVER_REFUSED,
                "cutover.applicationRoles: " + String.join("; ", each) + ". Applications must be able to read "
                        + table + " and not change it, or they could reopen the fence under a cutover. Fix the"
                        + " grants (or the list), then run --prepare again. Nothing was changed.");
    }

    public Cutover cutover(String owner) {
        return new Cutover(
                settings,
                lock(),
                routes,
                journal(),
                alignment(),
                new ReverseStreamView(redis, handoff, Duration.ofSeconds(5)),
                new ReplicaWait(redis),
                writeLog(),
                bypassed(),
                this::partitionKey,
                owner);
    }

    /** Writes to the moved table that bypassed the Postgres fence while the tail was held. */
    public BypassedWrites bypassed() {
        return new BypassedWrites(redis, handoff);
    }

    /** The keys applications write to DynamoDB under TARGET (ADR 9). */
    public TargetWriteLog writeLog() {
        return new TargetWriteLog(redis, scopeKeys);
    }

    /**
     * The target table's key attributes as DynamoDB describes them, as the log of written keys names them: the
     * partition key, then a sort key, joined by commas ({@link TargetWriteLog.Target#keyAttributes()}).
     */
    private String partitionKey() {
        String known = keyAttributes.get();
        if (known != null) return known; // a table's key schema never changes: read once, before any window
        List<KeySchemaElement> schema = dynamo.describeTable(b -> b.tableName(settings.targetTable()))
                .table()
                .keySchema();
        String hash = schema.stream()
                .filter(k -> k.keyType() == KeyType.HASH)
                .map(KeySchemaElement::attributeName)
                .findFirst()
                .orElseThrow(() -> new IllegalStateException(
                        "DynamoDB table '" + settings.targetTable() + "' has no partition key"));
        String attributes = schema.stream()
                .filter(k -> k.keyType() == KeyType.RANGE)
                .map(k -> hash + "," + k.attributeName())
                .findFirst()
                .orElse(hash);
        keyAttributes.set(attributes);
        return attributes;
    }

    public SharedExclusiveLock lock() {
        return new SharedExclusiveLock(redis, scopeKeys);
    }

    public CutoverJournal journal() {
        return new CutoverJournal(redis, scopeKeys);
    }

    public RoutingTable routes() {
        return routes;
    }

    public ReverseStreamView reverse() {
        return new ReverseStreamView(redis, handoff, Duration.ofSeconds(5));
    }

    public ForwardHold hold() {
        return new ForwardHold(redis, handoff);
    }

    Alignment alignment() {
        return new Alignment(session, pgFence, dynamoFence, hold(), settings.scope());
    }

    public CutoverSettings settings() {
        return settings;
    }
}
