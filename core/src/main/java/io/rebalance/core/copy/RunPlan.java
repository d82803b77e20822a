package io.rebalance.core.copy;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.slot.SlotRange;
import io.rebalance.core.source.SchemaChange;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What a run copies, fixed by the first process that starts it and shared through Redis: every later process
 * copies exactly these slots even if the table has grown since (min/max would otherwise move under them).
 *
 * @param targetEndpoint the DynamoDB endpoint URL, empty for AWS itself; null in a plan recorded before plans kept it
 * @param targetRegion the region resolved for DynamoDB; null in a plan recorded before plans kept it
 * @param newest name of the newest slot, copied first
 * @param oldest name of the oldest slot, copied last
 * @param estimatedRows Postgres's estimate of the table's rows at planning time, for the ETA; not a promise
 * @param columns the copied columns as {@code name type} ({@code SourceTable.schema()}), or null in a plan recorded
 *     before plans kept them
 * @param noTime whether the run copies the {@code notime} slot last (slots from a time column: its rows with no hour)
 */
public record RunPlan(
        String table,
        String keyColumn,
        String targetTable,
        String targetEndpoint,
        String targetRegion,
        String newest,
        String oldest,
        long estimatedRows,
        long createdMs,
        List<String> columns,
        boolean noTime) {
    private static final ObjectMapper JSON = new ObjectMapper();

    public SlotRange range() {
        return new SlotRange(Slot.parse(newest), Slot.parse(oldest), noTime);
    }

    /** Differences that make {@code other} a different run, as "field: this vs other" lines; empty when compatible. */
    public List<String> conflictsWith(RunPlan other) {
        List<String> out = new ArrayList<>();
        if (!table.equals(other.table)) out.add("source.table: " + table + " vs " + other.table);
        if (!keyColumn.equals(other.keyColumn)) out.add("source.keyColumns: " + keyColumn + " vs " + other.keyColumn);
        if (!targetTable.equals(other.targetTable))
            out.add("target.table: " + targetTable + " vs " + other.targetTable);
        if (targetEndpoint != null && !targetEndpoint.equals(other.targetEndpoint))
            out.add("target.endpoint: " + where(targetEndpoint) + " vs " + where(other.targetEndpoint));
        if (targetRegion != null && !targetRegion.equals(other.targetRegion))
            out.add("target.region: " + targetRegion + " vs " + other.targetRegion);
        return out;
    }

    /** What changed in the table's columns since this plan, or empty (also when the plan kept no columns). */
    public Optional<String> schemaChange(List<String> now) {
        return columns == null ? Optional.empty() : SchemaChange.between(columns, now);
    }

    /** This plan with the table's columns as they are now: the run goes on in the new shape. */
    public RunPlan withColumns(List<String> now) {
        return with(newest, oldest, now, noTime);
    }

    /** This plan over {@code range}: the key ranges kept, which another process may have planned. */
    public RunPlan withRange(SlotRange range) {
        return with(range.newest().name(), range.oldest().name(), columns, range.noTime());
    }

    private RunPlan with(String newest, String oldest, List<String> columns, boolean noTime) {
        return new RunPlan(
                table,
                keyColumn,
                targetTable,
                targetEndpoint,
                targetRegion,
                newest,
                oldest,
                estimatedRows,
                createdMs,
                columns,
                noTime);
    }

    private static String where(String endpoint) {
        return endpoint == null || endpoint.isEmpty() ? "AWS" : endpoint;
    }

    public String toJson() {
        try {
            return JSON.writeValueAsString(this);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    public static RunPlan fromJson(String json) {
        try {
            return JSON.readValue(json, RunPlan.class);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("run plan in Redis is unreadable: " + json, e);
        }
    }
}
