package io.rebalance.ops;

import io.rebalance.cdc.CopyCoverage;
import io.rebalance.cdc.reverse.ReverseWritesPreflight;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.DynamoClients;
import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.dynamo.TargetTable;
import io.rebalance.core.redis.RedisConnector;
import io.rebalance.core.refused.RefusedRows;
import io.rebalance.core.source.PartRows;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.mover.Coordinator;
import io.rebalance.mover.Coordinators;
import io.rebalance.mover.MoverProcess;
import io.rebalance.mover.PhaseHooks;
import io.rebalance.mover.RunPlanner;
import io.rebalance.mover.RunState;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.fence.DynamoFence;
import io.rebalance.protocol.fence.FenceState;
import io.rebalance.protocol.fence.PostgresFence;
import io.rebalance.protocol.part.PartMap;
import io.rebalance.protocol.route.Route;
import io.rebalance.protocol.route.RouteStatus;
import io.rebalance.protocol.route.RoutingTable;
import io.rebalance.protocol.route.StoreOfRecord;
import io.rebalance.verifier.VerificationStore;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;

/**
 * The service clients one command uses, opened on demand and closed together. {@code target.endpoint: embedded} is
 * not an endpoint here: the demo resolves it to the DynamoDB Local it starts before anything connects.
 */
public final class Connections implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Connections.class);
    private final MigrationConfig config;
    private final int poolSize;
    private UnifiedJedis redis;
    private DynamoDbClient dynamo;
    private String dynamoEndpoint;
    private boolean restoreTried;
    private Coordinator coordinator;

    public Connections(MigrationConfig config, int poolSize) {
        if (config.target().embedded())
            throw new IllegalArgumentException(
                    "target.endpoint 'embedded' must be resolved to DynamoDB Local's URL first");
        this.config = config;
        this.poolSize = poolSize;
    }

    public UnifiedJedis redis() {
        if (redis == null) redis = RedisConnector.connect(config.redis(), poolSize);
        return redis;
    }

    /** The scopes' shadow reads, in Redis. */
    public ShadowReport shadowReport() {
        return new ShadowReport(redis(), config.redis().keyspace());
    }

    public MigrationConfig config() {
        return config;
    }

    /** Where the run's copy processes coordinate ({@code mover.coordinator}), opened on first use. */
    public Coordinator coordinator() {
        if (coordinator == null) coordinator = Coordinators.open(config, this::redis, poolSize + 4);
        return coordinator;
    }

    /** A copy process of the run {@code prepared} describes, coordinated and recording refusals as configured. */
    public MoverProcess moverProcess(RunPlanner.Prepared prepared) {
        return new MoverProcess(
                config, prepared.table(), prepared.plan(), coordinator(), refusedRows(), dynamo(), PhaseHooks.NONE);
    }

    /** The latest verification of each slot. */
    public VerificationStore verifications() {
        return new VerificationStore(coordinator().verified());
    }

    /** Where rows DynamoDB cannot hold are recorded. */
    public RefusedRows refusedRows() {
        return new RefusedRows(coordinator().refused());
    }

    /**
     * The run's state. The first call gives a Redis that lost the run's keys the finished copy kept on the
     * Postgres fence, if one is kept there (ADR 12); a Postgres that cannot be asked leaves it to the next command.
     */
    public RunState runState() {
        RunState run = coordinator().run();
        if (!restoreTried && !config.mover().coordinatedByPostgres()) { // Postgres keeps the run itself
            restoreTried = true;
            try {
                new CopyRecord(config).restore(run);
            } catch (SQLException | RuntimeException e) {
                log.debug("no finished copy given back: {}", e.toString());
            }
        }
        return run;
    }

    /** Keeps the finished copy's record on the Postgres fence, when the copy is FINISHED and the fence installed. */
    public void keepCopyRecord() {
        new CopyRecord(config).keep(runState());
    }

    /** Clears the finished copy's record from the fence: the copy was forgotten on purpose. */
    public void clearCopyRecord() throws SQLException {
        new CopyRecord(config).clear();
    }

    public DynamoDbClient dynamo() {
        if (dynamo == null) {
            dynamoEndpoint = config.target().endpoint();
            dynamo = DynamoClients.create(config.target(), dynamoEndpoint, poolSize * 2, List.of());
        }
        return dynamo;
    }

    /**
     * Which store holds the truth for the run's cutover scope now, from both fences and Redis' route: Postgres until a
     * cutover opens DynamoDB to applications. Every write of Postgres rows into DynamoDB asks first.
     */
    public StoreOfRecord storeOfRecord() throws SQLException {
        String base = config.cutover().scope();
        try (Connection pg = new SourceSession(config.source()).openForPreflight()) {
            // a table moved part by part: DynamoDB holds the truth of the table's rows once any part left SOURCE
            StoreOfRecord first = null;
            for (String scope : config.cutover().partMap().scopes(base)) {
                StoreOfRecord one = StoreOfRecord.read(
                        pg,
                        new PostgresFence(config.cutover().pgFence()),
                        new DynamoFence(dynamo(), config.cutover().dynamoFence()),
                        route(scope),
                        scope);
                if (!one.postgres() && !scope.equals(base)) {
                    return new StoreOfRecord(
                            one.store(), one.route(), one.epoch(), "part " + scope + ": " + one.detail());
                }
                if (!one.postgres()) return one;
                if (first == null) first = one;
            }
            return first;
        } catch (SdkClientException e) {
            throw new RebalanceException(
                    ErrorCode.TARGET_UNREACHABLE,
                    "DynamoDB at " + dynamoWhere() + " does not answer (" + e.getMessage() + ") reading the fence"
                            + " table " + config.cutover().dynamoFence() + "; start it or fix target.endpoint",
                    e);
        } catch (DynamoDbException e) {
            throw new RebalanceException(
                    ErrorCode.TARGET_UNREACHABLE,
                    "DynamoDB at " + dynamoWhere() + " refused reading the fence table "
                            + config.cutover().dynamoFence() + ": " + e.getMessage() + "; the role needs GetItem on it"
                            + " (cutover.dynamoFence) to know whether Postgres is still the store of record",
                    e);
        }
    }

    /** Refuses parts that differ from those the table is moving under ({@link PartChoice#refuseChanged}). */
    public void refuseChangedParts(PartChoice choice) throws SQLException {
        try (Connection pg = new SourceSession(config.source()).openForPreflight()) {
            choice.refuseChanged(pg, new PostgresFence(config.cutover().pgFence()));
        }
    }

    /**
     * The rows verification compares (ADR 20): every row, but for a table moved part by part only those of the parts
     * Postgres still keeps, as their fences say: a part whose window closed (FINAL) is DynamoDB's alone, and its rows
     * in Postgres stay as they were.
     */
    public PartRows keptRows(SourceTable table) throws SQLException {
        PartMap parts = config.cutover().partMap();
        if (!parts.parted()) return PartRows.ALL;
        String base = config.cutover().scope();
        Map<String, FenceState> fences;
        try (Connection pg = new SourceSession(config.source()).openForPreflight()) {
            fences = new PostgresFence(config.cutover().pgFence()).findAll(pg, parts.scopes(base));
        } catch (SQLException e) {
            if ("42P01".equals(e.getSQLState())) return PartRows.ALL; // no fence table: no part was ever prepared
            throw e;
        }
        Set<String> kept = new LinkedHashSet<>();
        for (String name : parts.names()) {
            FenceState f = fences.get(PartMap.scope(base, name));
            if (f == null || f.route() != RouteStatus.FINAL) kept.add(name);
        }
        if (kept.size() == parts.names().size()) return PartRows.ALL;
        return PartRows.of(parts, table.key(), new PartChoice(base, parts, null).partitionColumn(table), kept);
    }

    /** The status of a scope's route in Redis; empty when it has none (not prepared, or Redis lost it). */
    public Optional<RouteStatus> routeStatus(String scope) {
        return route(scope).map(Route::status);
    }

    /** Redis' route of the scope; none with the Postgres coordinator, which has no Redis (the fences still count). */
    private Optional<Route> route(String scope) {
        if (config.mover().coordinatedByPostgres()) return Optional.empty();
        return new RoutingTable(redis(), config.redis().keyspace()).get(scope);
    }

    /**
     * The source table as Postgres describes it now, read on a preflight session of its own, with its key ranges kept
     * where it has them.
     */
    public SourceTable sourceTable() throws SQLException {
        try (Connection pg = new SourceSession(config.source()).openForPreflight()) {
            return SourceTable.inspect(pg, config).keepRanges(pg);
        }
    }

    /**
     * The source table as Postgres describes it now, with the key ranges a copy, tail or verify kept; planned but not
     * kept where none did (the cutover keeps none: it reads no row by range before a copy has kept them).
     */
    public SourceTable sourceTableAsKept() throws SQLException {
        try (Connection pg = new SourceSession(config.source()).openForPreflight()) {
            return SourceTable.inspect(pg, config);
        }
    }

    /**
     * Refuses a copy that would race the application's writes without a tail to carry them (docs/mover.md), before
     * anything is planned or created.
     */
    public void checkCopyCoverage() throws SQLException {
        try (Connection pg = new SourceSession(config.source()).openForPreflight()) {
            CopyCoverage.check(pg, config);
        }
    }

    /** Why the reverse stream could not write {@code table}'s rows back (none when it can), planned with EXPLAIN. */
    public List<String> reverseWriteProblems(SourceTable table) throws SQLException {
        try (Connection pg = new SourceSession(config.source()).openForPreflight()) {
            return ReverseWritesPreflight.problems(pg, table);
        }
    }

    /**
     * Refuses a target table whose key or slot index is not what {@code table} maps to (another migration's table).
     */
    public void checkTarget(SourceTable table) {
        TargetTable.check(dynamo(), config.target().table(), table.key(), SlotIndex.of(config.target()), dynamoWhere());
    }

    /** Where DynamoDB is, for messages: the endpoint, or "AWS region X". */
    public String dynamoWhere() {
        dynamo();
        return dynamoEndpoint.isEmpty()
                ? "AWS region " + dynamo.serviceClientConfiguration().region()
                : dynamoEndpoint;
    }

    @Override
    public void close() {
        if (coordinator != null) coordinator.close();
        if (redis != null) redis.close();
        if (dynamo != null) dynamo.close();
    }
}
