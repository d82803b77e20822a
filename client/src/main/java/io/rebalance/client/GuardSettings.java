package io.rebalance.client;

import java.time.Duration;

/**
 * How a {@link WriteGuard} behaves.
 *
 * @param prefix the Redis key prefix of the migration ({@code redis.prefix} in its config)
 * @param leaseTtl how long a write's shared lease lives unless renewed: the longest a dead writer can delay a cutover
 * @param maxWait how long a write waits while a cutover blocks writes before it fails with {@code
 *     LockWaitTimeoutException}; set it above the cutover's {@code --max-write-block} so a normal cutover fails no write
 * @param postgresFenceTable the fence table in the source database, as the cutover installed it
 * @param dynamoFenceTable the fence table in DynamoDB, as the cutover installed it
 */
public record GuardSettings(
        String prefix, Duration leaseTtl, Duration maxWait, String postgresFenceTable, String dynamoFenceTable) {
    public GuardSettings {
        if (leaseTtl.toMillis() < 100) {
            throw new IllegalArgumentException("leaseTtl " + leaseTtl + " is below 100 ms; renewals could not keep up");
        }
        if (maxWait.isNegative()) throw new IllegalArgumentException("maxWait " + maxWait + " is negative");
    }

    /** Defaults that match {@code rebalance cutover}'s: 5 s leases, 2 s wait, the fence tables it creates. */
    public static GuardSettings defaults(String prefix) {
        return new GuardSettings(
                prefix, Duration.ofSeconds(5), Duration.ofSeconds(2), "public.rebalance_fence", "rebalance_fence");
    }

    public GuardSettings withMaxWait(Duration d) {
        return new GuardSettings(prefix, leaseTtl, d, postgresFenceTable, dynamoFenceTable);
    }

    public GuardSettings withLeaseTtl(Duration d) {
        return new GuardSettings(prefix, d, maxWait, postgresFenceTable, dynamoFenceTable);
    }
}
