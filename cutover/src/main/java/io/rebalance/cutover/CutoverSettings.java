package io.rebalance.cutover;

import io.rebalance.protocol.part.PartMap;
import java.time.Duration;
import java.util.List;

/**
 * @param scope the name applications guard their writes under
 * @param sourceTable the moved Postgres table, as the configuration names it: the fence's trigger guards it
 * @param targetTable the DynamoDB table (its stream feeds the reverse stream)
 * @param maxWriteBlock the longest writes may stay blocked; past it the command aborts before its point of no return
 * @param leaseTtl the exclusive lease's TTL: how soon writes resume after the cutover process dies
 * @param applicationRoles the Postgres roles applications write as: granted SELECT on the fence, and none may change it
 * @param alignWait how long recovery waits for the forward tail to acknowledge a hold
 * @param fenceStripes the items {@code --prepare} gives the scope's DynamoDB fence when it is not installed yet (ADR 19)
 * @param part the part the scope is, for a table moved part by part; null for a table moved whole
 */
public record CutoverSettings(
        String scope,
        String sourceTable,
        String targetTable,
        Duration maxWriteBlock,
        Duration leaseTtl,
        List<String> applicationRoles,
        Duration alignWait,
        int fenceStripes,
        Part part) {

    /**
     * One part of a table moved part by part: the table's scope, its parts, and the partition-key column their rules
     * read (quoted as needed); the settings' scope is {@code base/name}.
     */
    public record Part(String base, PartMap parts, String name, String column) {}

    /** Settings of a table moved whole. */
    public CutoverSettings(
            String scope,
            String sourceTable,
            String targetTable,
            Duration maxWriteBlock,
            Duration leaseTtl,
            List<String> applicationRoles,
            Duration alignWait,
            int fenceStripes) {
        this(scope, sourceTable, targetTable, maxWriteBlock, leaseTtl, applicationRoles, alignWait, fenceStripes, null);
    }

    /** The command that recovers this scope, as messages name it: with {@code --part} for a part. */
    public String recoverCommand() {
        return "rebalance cutover --recover" + (part == null ? "" : " --part " + part.name());
    }

    public CutoverSettings withMaxWriteBlock(Duration d) {
        return new CutoverSettings(
                scope, sourceTable, targetTable, d, leaseTtl, applicationRoles, alignWait, fenceStripes, part);
    }

    /** The settings of one part of the table, whose scope these settings name. */
    public CutoverSettings forPart(PartMap parts, String name, String column) {
        return new CutoverSettings(
                PartMap.scope(scope, name),
                sourceTable,
                targetTable,
                maxWriteBlock,
                leaseTtl,
                applicationRoles,
                alignWait,
                fenceStripes,
                new Part(scope, parts, name, column));
    }
}
