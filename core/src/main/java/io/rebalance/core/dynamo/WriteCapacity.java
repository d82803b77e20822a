package io.rebalance.core.dynamo;

import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.TableDescription;

/**
 * What the target table takes in writes, as DynamoDB describes it: whether it is on-demand (then it takes twice its
 * previous peak at once, and its warm throughput from the start) and its warm throughput; and raising that warm
 * throughput ahead of a copy.
 *
 * @param onDemand billed per request (PAY_PER_REQUEST)
 * @param warmWriteUnits write units per second the table takes at once; for an on-demand table that reports none,
 *     {@link #NEW_ON_DEMAND}
 */
public record WriteCapacity(boolean onDemand, long warmWriteUnits) {
    /** What a new on-demand table takes at once, writes per second (DynamoDB's documented start). */
    public static final long NEW_ON_DEMAND = 4_000;

    public static WriteCapacity of(DynamoDbClient dynamo, String table) {
        TableDescription t = dynamo.describeTable(b -> b.tableName(table)).table();
        boolean onDemand =
                t.billingModeSummary() != null && t.billingModeSummary().billingMode() == BillingMode.PAY_PER_REQUEST;
        Long warm = t.warmThroughput() == null ? null : t.warmThroughput().writeUnitsPerSecond();
        return new WriteCapacity(onDemand, warm != null && warm > 0 ? warm : onDemand ? NEW_ON_DEMAND : 0);
    }

    /**
     * Raises the table's warm throughput to {@code units} writes per second unless it is that high already.
     *
     * @return null when raised or high enough; else why DynamoDB did not take it (the copy goes on without it: warm
     *     throughput makes a copy faster from the start, never more correct)
     */
    public static String warm(DynamoDbClient dynamo, String table, long units) {
        if (of(dynamo, table).warmWriteUnits() >= units) return null;
        try {
            dynamo.updateTable(b -> b.tableName(table).warmThroughput(w -> w.writeUnitsPerSecond(units)));
            return null;
        } catch (DynamoDbException e) { // no permission, a table being updated, an endpoint without warm throughput
            return e.awsErrorDetails() == null
                    ? e.getMessage()
                    : e.awsErrorDetails().errorMessage();
        }
    }
}
