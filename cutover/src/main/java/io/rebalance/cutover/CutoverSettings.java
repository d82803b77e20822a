package io.rebalance.cutover;

import java.time.Duration;

/**
 * @param scope the name applications guard their writes under
 * @param targetTable the DynamoDB table (its stream feeds the reverse stream)
 * @param maxWriteBlock the longest writes may stay blocked; past it the command aborts before its point of no return
 * @param leaseTtl the exclusive lease's TTL: how soon writes resume after the cutover process dies
 * @param streamSettle rollback waits this long before asking for the drain round (DynamoDB Streams' delay on AWS)
 * @param alignWait how long recovery waits for the forward tail to acknowledge a hold
 */
public record CutoverSettings(
        String scope,
        String targetTable,
        Duration maxWriteBlock,
        Duration leaseTtl,
        Duration streamSettle,
        Duration alignWait) {

    public CutoverSettings withMaxWriteBlock(Duration d) {
        return new CutoverSettings(scope, targetTable, d, leaseTtl, streamSettle, alignWait);
    }
}
