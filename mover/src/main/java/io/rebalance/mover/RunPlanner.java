package io.rebalance.mover;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.copy.RunPlan;
import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.dynamo.TargetTable;
import io.rebalance.core.slot.KeyRanges;
import io.rebalance.core.slot.RangeOutliers;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.slot.SlotKeyspace;
import io.rebalance.core.slot.SlotRange;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/**
 * The preflight of a copy and the plan it agrees on. It reads only, in this order: the source table and its key,
 * the target table and its key schema, the time range. Then (the first writes) it creates the target table if
 * asked, and stores the plan with the coordinator unless another process already stored one, which must then
 * describe the same run. So a bad input fails before anything is written anywhere.
 */
public final class RunPlanner {
    private static final Logger log = LoggerFactory.getLogger(RunPlanner.class);
    private static final int ENDS = RangeOutliers.ENDS;
    private final MigrationConfig config;

    public RunPlanner(MigrationConfig config) {
        this.config = config;
    }

    /**
     * What a process needs to join the run.
     *
     * @param accepted the change of the table's columns {@code --accept-schema} took into the plan, or empty
     */
    public record Prepared(SourceTable table, RunPlan plan, Optional<String> accepted) {}

    /**
     * @param dynamoWhere where DynamoDB is, for messages
     * @param createTable create the target table when it does not exist
     */
    public Prepared prepare(RunState run, DynamoDbClient dynamo, String dynamoWhere, boolean createTable) {
        return prepare(run, dynamo, dynamoWhere, createTable, false);
    }

    /**
     * The table's columns as they are now must be those the run was planned with, unless {@code acceptSchema}: then
     * the plan takes them (and the rows copied before must be repaired).
     *
     * @throws RebalanceException SCHEMA_CHANGED naming the change and the way on
     */
    public Prepared prepare(
            RunState run, DynamoDbClient dynamo, String dynamoWhere, boolean createTable, boolean acceptSchema) {
        SourceTable table;
        SlotRange range;
        long estimate;
        try (Connection c = new SourceSession(config.source()).openForPreflight()) {
            table = SourceTable.inspect(c, config);
            range = range(c, table);
            if (run.plan() == null) {
                rangeWarnings(c, table).forEach(w -> log.warn("the run's range from the table: {}", w));
            }
            estimate = estimate(c, table.name());
        } catch (SQLException e) {
            throw new RebalanceException(
                    ErrorCode.SOURCE_UNREACHABLE, "Postgres failed during preflight: " + e.getMessage(), e);
        }
        RunPlan wanted = new RunPlan(
                table.name(),
                table.key().describe(),
                config.target().table(),
                endpoint(dynamo),
                dynamo.serviceClientConfiguration().region().id(),
                range.newest().name(),
                range.oldest().name(),
                estimate,
                System.currentTimeMillis(),
                table.schema(),
                range.noTime());
        RunPlan existing = run.plan();
        if (existing != null) refuseConflicts(existing, wanted); // before anything is created where it points
        if (createTable && !TargetTable.exists(dynamo, config.target().table(), dynamoWhere)) {
            TargetTable.create(dynamo, config.target().table(), table.key(), SlotIndex.of(config.target()));
        }
        TargetTable.check(dynamo, config.target().table(), table.key(), SlotIndex.of(config.target()), dynamoWhere);

        if (table.keyspace() instanceof KeyRanges planned && !planned.stored()) {
            try (Connection c = new SourceSession(config.source()).openForPreflight()) {
                table = table.keepRanges(c); // the first write to the source: after every check
            } catch (SQLException e) {
                throw new RebalanceException(ErrorCode.SOURCE_UNREACHABLE, "Postgres failed: " + e.getMessage(), e);
            }
            wanted = wanted.withRange(((KeyRanges) table.keyspace()).range());
        }
        RunPlan plan = existing != null ? existing : run.claimPlan(wanted);
        Optional<String> changed = plan.schemaChange(table.schema());
        if (changed.isPresent() && !acceptSchema) throw schemaChanged(table.name(), changed.get());
        if (changed.isPresent() || plan.columns() == null) {
            plan = plan.withColumns(table.schema());
            run.replacePlan(plan);
            changed.ifPresent(c -> log.warn(
                    "the run goes on with the table as it is now ({}): the rows copied before lack it; run"
                            + " `rebalance verify --all --repair` once the copy is FINISHED",
                    c));
        }
        refuseConflicts(plan, wanted); // another process may have claimed the run meanwhile
        if (existing != null
                && (!existing.newest().equals(wanted.newest())
                        || !existing.oldest().equals(wanted.oldest()))) {
            // Normal when the table grew since the run began; worth a line when the range was configured differently.
            log.warn(
                    "joining the run's plan, slots {}..{}; this process's configuration gives {}..{}, which is ignored"
                            + " (`rebalance reset` and a new run to change the range)",
                    existing.newest(),
                    existing.oldest(),
                    wanted.newest(),
                    wanted.oldest());
        }
        return new Prepared(table, plan, changed);
    }

    /** The refusal every part gives when the table's columns are not those of the run (docs/schema-changes.md). */
    public static RebalanceException schemaChanged(String table, String change) {
        return new RebalanceException(
                ErrorCode.SCHEMA_CHANGED,
                "source table " + table + " changed since the run was planned: " + change + ". Items written from"
                        + " now on would have another shape than those written before, so nothing more is written."
                        + " To go on in the new shape: `rebalance copy --accept-schema` (records the table as it is"
                        + " now and copies on), restart `rebalance tail`, then `rebalance verify --all --repair`"
                        + " rewrites the rows copied before (docs/schema-changes.md)");
    }

    public String partitionKey(SourceTable table) {
        return table.partitionKey();
    }

    /** The run's slots: slots.from/to, or the table's min/max where either is empty. */
    public SlotRange range(Connection c, SourceTable table) throws SQLException {
        if (table.keyspace() instanceof KeyRanges ranges) return ranges.range(); // every key, present and future
        Instant from = config.slots().fromInstant();
        Instant to = config.slots().toInstant();
        if (table.keyspace() instanceof SlotKeyspace.UlidUuids) refuseTimelessUuids(c, table);
        if (table.keyspace() instanceof SlotKeyspace.SnowflakeIds ids) refuseSequences(c, table, ids);
        if (from == null || to == null) {
            Instant[] minMax = minMax(c, table);
            if (minMax == null) {
                throw new RebalanceException(
                        ErrorCode.TIME_RANGE_INVALID,
                        "source table " + table.name() + " is empty"
                                + " and slots.from/slots.to are not set, so there is no time range to copy; set both"
                                + " (for example slots.from=2024-01-01T00:00:00Z, slots.to=2024-10-20T00:00:00Z)");
            }
            if (from == null) from = minMax[0];
            if (to == null) to = minMax[1].plusMillis(1); // to is exclusive; the newest row must be inside
        }
        Slot oldest = Slot.containing(from);
        Slot newest = Slot.containing(to.minusNanos(1));
        if (newest.isOlderThan(oldest)) {
            throw new RebalanceException(
                    ErrorCode.TIME_RANGE_INVALID,
                    "time range from " + from + " to " + to
                            + " holds no slot: from must be before to; check slots.from and slots.to against the table's data");
        }
        // slots from a time column: its rows with no hour (NULL, ±infinity) are the notime slot's, copied last
        SlotRange range = new SlotRange(newest, oldest, table.keyspace() instanceof SlotKeyspace.TimeColumn);
        try {
            table.keyspace().checkRange(range);
        } catch (IllegalArgumentException e) {
            throw new RebalanceException(ErrorCode.TIME_RANGE_INVALID, e.getMessage());
        }
        return range;
    }

    /**
     * uuid keys are slotted by their first 48 bits, which are the millisecond in ULIDs and UUIDv7 and random in version
     * 4: those give times no row has, and most rows would fall outside any range, so they are refused (told apart by
     * the times, not the version bits, which ULIDs fill at random).
     */
    private static void refuseTimelessUuids(Connection c, SourceTable table) throws SQLException {
        Instant[] minMax = minMax(c, table);
        if (minMax == null) return;
        Instant now = Instant.now();
        if (!RangeOutliers.implausible(minMax[0], now) && !RangeOutliers.implausible(minMax[1], now)) return;
        throw new RebalanceException(
                ErrorCode.SOURCE_KEY_TYPE,
                "key column " + table.key().timeColumn() + " of " + table.name()
                        + " is uuid, but its values carry no time:"
                        + " read as ULIDs or UUIDv7 (the first 48 bits the millisecond) they run from " + minMax[0]
                        + " to " + minMax[1] + ", so they look like random (version 4) uuids. Slot the rows by"
                        + " ranges of the key instead (slots.timeFrom: none; `rebalance check` surveys them), or by a"
                        + " timestamp column set on insert (slots.timeFrom: column and slots.timeColumn, with an"
                        + " index: each slot is a range scan on it)");
    }

    /**
     * Integers read as time-ordered ids that all fall within a day of the layout's epoch are too small to hold a time:
     * a sequence, whose rows would all be one slot. Refused, naming key ranges; ids read with the wrong epoch (decades
     * off, not within a day of it) are only warned about ({@link #rangeWarnings}).
     */
    private static void refuseSequences(Connection c, SourceTable table, SlotKeyspace.SnowflakeIds ids)
            throws SQLException {
        Instant[] minMax = minMax(c, table);
        if (minMax == null) return;
        Instant epoch = Instant.ofEpochMilli(ids.layout().epochMillis());
        if (minMax[1].isAfter(epoch.plus(Duration.ofDays(1)))) return;
        throw new RebalanceException(
                ErrorCode.SOURCE_KEY_TYPE,
                "key column " + table.key().timeColumn() + " of " + table.name() + " is an integer, but its values"
                        + " carry no time: read as time-ordered ids (slots.snowflake) they all fall within a day of"
                        + " its epoch " + epoch + ", so they look like a sequence. Slot the rows by ranges of the key"
                        + " instead (slots.timeFrom: none; `rebalance check` surveys them), or by a timestamp column"
                        + " set on insert (slots.timeFrom: column and slots.timeColumn)");
    }

    /**
     * What looks wrong in the range {@link #range} takes from the table (none when slots.from and slots.to are both
     * set): see {@link RangeOutliers}.
     */
    public List<String> rangeWarnings(Connection c, SourceTable table) throws SQLException {
        if (table.keyspace() instanceof KeyRanges) return List.of(); // no time to be implausible
        if (config.slots().fromInstant() != null && config.slots().toInstant() != null) return List.of();
        String key = table.key().selectText("");
        List<RangeOutliers.Row> oldest = ends(c, hours(table).extremesQuery(table.name(), key, false, ENDS), table);
        List<RangeOutliers.Row> newest = ends(c, hours(table).extremesQuery(table.name(), key, true, ENDS), table);
        return RangeOutliers.warnings(oldest, newest, Instant.now());
    }

    private static List<RangeOutliers.Row> ends(Connection c, String sql, SourceTable table) throws SQLException {
        List<RangeOutliers.Row> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql);
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                if (rs.getString(2) == null) continue;
                try {
                    out.add(new RangeOutliers.Row(rs.getString(1), hours(table).instantOf(rs.getString(2))));
                } catch (IllegalArgumentException e) {
                    return List.of(); // minMax names keys that carry no time
                }
            }
        }
        return out;
    }

    /** The table's hours: every path here that reads time has returned already where its slots are key ranges. */
    private static SlotKeyspace.Hours hours(SourceTable table) {
        return (SlotKeyspace.Hours) table.keyspace();
    }

    private static Instant[] minMax(Connection c, SourceTable table) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(hours(table).minMaxQuery(table.name()));
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            if (rs.getString(1) == null) return null;
            try {
                return new Instant[] {
                    hours(table).instantOf(rs.getString(1)), hours(table).instantOf(rs.getString(2))
                };
            } catch (IllegalArgumentException e) {
                throw new RebalanceException(
                        ErrorCode.SOURCE_KEY_TYPE,
                        "key values of " + table.name() + " do not carry"
                                + " a time as configured (" + e.getMessage()
                                + "); set slots.idFormat to match the ids; or, where nothing in a row tells time,"
                                + " slots.timeFrom: none (ranges of the key; `rebalance check` surveys them), or"
                                + " slots.timeFrom: column with a timestamp column");
            }
        }
    }

    /**
     * The table's rows as Postgres' statistics count them, summed over its partitions; a table (or partition) never
     * ANALYZEd has none ({@code reltuples = -1}), so its rows are estimated as its size over the width of a sample of
     * its rows (a plan of ~0 rows gave no ETA).
     */
    static long estimate(Connection c, String table) throws SQLException {
        long counted;
        long unanalyzedBytes;
        try (PreparedStatement ps = c.prepareStatement("SELECT coalesce(sum(CASE WHEN k.reltuples >= 0 THEN"
                + " k.reltuples END), 0)::int8, coalesce(sum(CASE WHEN k.reltuples < 0 THEN pg_relation_size(k.oid)"
                + " END), 0)::int8 FROM pg_class k WHERE k.relkind <> 'p' AND (k.oid = ?::regclass OR k.oid IN"
                + " (SELECT relid FROM pg_partition_tree(?::regclass) WHERE isleaf))")) {
            ps.setString(1, table);
            ps.setString(2, table);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) return 0;
                counted = rs.getLong(1);
                unanalyzedBytes = rs.getLong(2);
            }
        }
        if (unanalyzedBytes == 0) return counted;
        // 24-byte tuple header and 4-byte line pointer per row on top of its data (pg_column_size of the row)
        try (PreparedStatement ps = c.prepareStatement(
                        "SELECT avg(pg_column_size(s.*)) + 28 FROM (SELECT * FROM " + table + " LIMIT 1000) s");
                ResultSet rs = ps.executeQuery()) {
            double width = rs.next() ? rs.getDouble(1) : 0;
            return width <= 0 ? counted : counted + (long) (unanalyzedBytes / width);
        }
    }

    /** @throws RebalanceException RUN_CONFLICT when this process points at another table or DynamoDB than the run */
    /**
     * For the parts that join the run without planning it (tail, verify, cutover): refused (exit 20) when the run
     * under the prefix moves another table, or into another DynamoDB, than this process points at. Nothing to compare
     * before the copy planned the run.
     */
    public void refuseAnotherRun(RunState run, SourceTable table, DynamoDbClient dynamo) {
        RunPlan existing = run.plan();
        if (existing == null) return;
        refuseConflicts(
                existing,
                new RunPlan(
                        table.name(),
                        table.key().describe(),
                        config.target().table(),
                        endpoint(dynamo),
                        dynamo.serviceClientConfiguration().region().id(),
                        existing.newest(),
                        existing.oldest(),
                        existing.estimatedRows(),
                        existing.createdMs(),
                        existing.columns(),
                        existing.noTime()));
    }

    private static String endpoint(DynamoDbClient dynamo) {
        return dynamo.serviceClientConfiguration()
                .endpointOverride()
                .map(Object::toString)
                .orElse("");
    }

    private void refuseConflicts(RunPlan run, RunPlan wanted) {
        var conflicts = run.conflictsWith(wanted);
        if (conflicts.isEmpty()) return;
        boolean postgres = config.mover().coordinatedByPostgres();
        throw new RebalanceException(
                ErrorCode.RUN_CONFLICT,
                (postgres
                                ? "coordinator schema '" + config.coordinator().schema()
                                : "Redis prefix '" + config.redis().keyspace().prefix())
                        + "' already holds a different run (" + String.join("; ", conflicts) + "); point this"
                        + " process where the run is, use another " + (postgres ? "coordinator.schema" : "redis.prefix")
                        + " for this migration, or `rebalance reset` to forget the old run (its DynamoDB data stays)");
    }
}
