package io.rebalance.client;

import io.rebalance.protocol.part.PartMap;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * How a {@link WriteGuard} behaves.
 *
 * @param prefix the Redis key prefix of the migration ({@code redis.prefix} in its config)
 * @param leaseTtl how long a write's shared lease lives unless renewed: the longest a dead writer can delay a cutover
 * @param maxWait how long a write waits while a cutover blocks writes before it fails with {@code
 *     LockWaitTimeoutException}; set it above the cutover's {@code --max-write-block} so a normal cutover fails no write
 * @param postgresFenceTable the fence table in the source database, as the cutover installed it
 * @param dynamoFenceTable the fence table in DynamoDB, as the cutover installed it
 * @param parts the parts of each scope moved part by part ({@code cutover.parts}), by the table's scope; a scope
 *     without an entry moves whole
 */
public record GuardSettings(
        String prefix,
        Duration leaseTtl,
        Duration maxWait,
        String postgresFenceTable,
        String dynamoFenceTable,
        Map<String, PartMap> parts) {
    public GuardSettings(
            String prefix, Duration leaseTtl, Duration maxWait, String postgresFenceTable, String dynamoFenceTable) {
        this(prefix, leaseTtl, maxWait, postgresFenceTable, dynamoFenceTable, Map.of());
    }

    public GuardSettings {
        parts = Map.copyOf(parts);
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
        return new GuardSettings(prefix, leaseTtl, d, postgresFenceTable, dynamoFenceTable, parts);
    }

    public GuardSettings withLeaseTtl(Duration d) {
        return new GuardSettings(prefix, d, maxWait, postgresFenceTable, dynamoFenceTable, parts);
    }

    /**
     * The parts {@code scope}'s table is moved in, as its {@code cutover.parts} says: writes to it then name the row's
     * partition-key value, and each goes under its part's scope ({@code scope/part}).
     */
    public GuardSettings withParts(String scope, PartMap partMap) {
        Map<String, PartMap> all = new HashMap<>(parts);
        all.put(scope, partMap);
        return new GuardSettings(prefix, leaseTtl, maxWait, postgresFenceTable, dynamoFenceTable, all);
    }

    /** {@code scope}'s parts, {@link PartMap#WHOLE} when it moves whole. */
    public PartMap partsOf(String scope) {
        return parts.getOrDefault(scope, PartMap.WHOLE);
    }

    /**
     * The scope a write or read of {@code scope} with this partition-key value goes under: its part's, or {@code
     * scope} itself when it moves whole.
     *
     * @param partKey the row's partition-key value (the first key column); null only for a scope that moves whole
     * @throws IllegalArgumentException when the scope has parts and no value was given
     */
    String scopeOf(String scope, Object partKey) {
        PartMap map = partsOf(scope);
        if (!map.parted()) return scope;
        if (partKey == null) {
            throw new IllegalArgumentException("scope '" + scope + "' moves part by part (" + map.names() + "): give"
                    + " the row's partition-key value, as write(scope, key, ...) and route(scope, key) take it");
        }
        return map.scopeOf(scope, partKey);
    }
}
