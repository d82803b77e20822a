package io.rebalance.verifier;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.core.records.Records;
import io.rebalance.core.records.RedisRecords;
import io.rebalance.protocol.keyspace.Keyspace;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import redis.clients.jedis.UnifiedJedis;

/**
 * The latest verification of each slot, kept in the run's {@code verified} records (slot to JSON; in Redis the hash
 * {@code <prefix>verified}) so that
 * {@code rebalance status} shows what is proven and the cutover can require recent MATCHes. A result keeps at most
 * {@link #KEPT_DIFFERENCES} differences; the count is always exact.
 */
public final class VerificationStore {
    static final int KEPT_DIFFERENCES = 20;
    private static final ObjectMapper JSON =
            new ObjectMapper().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    private final Records records;

    public VerificationStore(UnifiedJedis redis, Keyspace keyspace) {
        this(new RedisRecords(redis, keyspace.verified()));
    }

    public VerificationStore(Records records) {
        this.records = records;
    }

    /** What is stored per slot. */
    public record Stored(
            String slot,
            SlotResult.Verdict verdict,
            long sourceRows,
            long targetItems,
            String sourceFingerprint,
            String targetFingerprint,
            int differenceCount,
            List<Difference> differences,
            int resolvedOnRecheck,
            int repaired,
            String walLsn,
            long atMillis,
            String error) {}

    public void save(SlotResult r) {
        Stored s = new Stored(
                r.slot(),
                r.verdict(),
                r.sourceRows(),
                r.targetItems(),
                r.sourceFingerprint(),
                r.targetFingerprint(),
                r.differences().size(),
                r.differences()
                        .subList(0, Math.min(KEPT_DIFFERENCES, r.differences().size())),
                r.resolvedOnRecheck(),
                r.repaired().size(),
                r.walLsn(),
                r.atMillis(),
                r.error());
        try {
            records.put(Map.of(r.slot(), JSON.writeValueAsString(s)));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a verification result did not serialize", e);
        }
    }

    /** Forgets every result: the items may no longer be what they were verified as (the table's columns changed). */
    public void forgetAll() {
        records.clear();
    }

    /** Every stored result, by slot, newest slot first. */
    public Map<String, Stored> all() {
        Map<String, Stored> out = new TreeMap<>(Comparator.reverseOrder());
        for (var e : records.all().entrySet()) {
            try {
                out.put(e.getKey(), JSON.readValue(e.getValue(), Stored.class));
            } catch (JsonProcessingException ex) {
                throw new IllegalStateException("verification result of " + e.getKey() + " is not readable", ex);
            }
        }
        return out;
    }
}
