package io.rebalance.core.refused;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rebalance.core.codec.RowRefusedException;
import io.rebalance.core.records.Records;
import io.rebalance.core.records.RedisRecords;
import io.rebalance.protocol.keyspace.Keyspace;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import redis.clients.jedis.UnifiedJedis;

/**
 * The rows DynamoDB cannot hold as mapped, recorded instead of stalling whoever met them: the run's {@code refused}
 * records ({@link Records}: in Redis the hash {@code <prefix>refused}), field = row id, value = a small JSON document
 * (slot, column, reason, who met it, WAL position, when). A row leaves the list when a later write of it succeeds (the
 * row was fixed, deleted, or the settings changed and it was retried), so the list is always "rows whose item is not
 * their row, and why".
 *
 * <p>The list has no TTL: a refused row is a difference between the stores until someone acts, and the cutover
 * refuses while any is listed.
 */
public final class RefusedRows {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Records records;

    public RefusedRows(UnifiedJedis redis, Keyspace keyspace) {
        this(new RedisRecords(redis, keyspace.refused()));
    }

    public RefusedRows(Records records) {
        this.records = records;
    }

    /**
     * One refused row.
     *
     * @param slot the row's slot, or "" when it has none
     * @param column the refused column, or "" when the row as a whole is refused (its size)
     * @param by what met it: {@code tail} (a change or a reconciliation) or {@code repair} (verify's repair or retry)
     * @param lsn the WAL position of the change that carried it (tail), or "" when none
     */
    public record Refusal(String id, String slot, String column, String reason, String by, String lsn, long atMs) {
        static Refusal of(RowRefusedException e, String by, String lsn, long atMs) {
            return new Refusal(e.key(), nz(e.slot()), nz(e.column()), e.reason(), by, lsn == null ? "" : lsn, atMs);
        }

        private static String nz(String s) {
            return s == null ? "" : s;
        }
    }

    /**
     * Records refusals, replacing an earlier entry of the same id (the latest reason is the one that holds).
     *
     * @param lsnOf the WAL position text of each id's change, or null for none
     */
    public void record(Collection<RowRefusedException> refused, String by, Function<String, String> lsnOf) {
        if (refused.isEmpty()) return;
        long now = System.currentTimeMillis();
        Map<String, String> fields = new LinkedHashMap<>();
        for (RowRefusedException e : refused) {
            fields.put(e.key(), encode(Refusal.of(e, by, lsnOf.apply(e.key()), now)));
        }
        records.put(fields);
    }

    /** Takes ids off the list: their items were written as their rows are now. */
    public void clear(Collection<String> ids) {
        records.remove(ids);
    }

    public long count() {
        return records.count();
    }

    /** Every listed row, by slot then id. */
    public List<Refusal> all() {
        List<Refusal> out = new ArrayList<>();
        for (Map.Entry<String, String> e : records.all().entrySet()) out.add(decode(e.getKey(), e.getValue()));
        out.sort(Comparator.comparing(Refusal::slot).thenComparing(Refusal::id));
        return out;
    }

    private static String encode(Refusal r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("slot", r.slot());
        m.put("column", r.column());
        m.put("reason", r.reason());
        m.put("by", r.by());
        m.put("lsn", r.lsn());
        m.put("at_ms", r.atMs());
        try {
            return JSON.writeValueAsString(m);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a map of strings and a number always serializes", e);
        }
    }

    private static Refusal decode(String id, String json) {
        try {
            Map<?, ?> m = JSON.readValue(json, Map.class);
            return new Refusal(
                    id,
                    String.valueOf(m.get("slot")),
                    String.valueOf(m.get("column")),
                    String.valueOf(m.get("reason")),
                    String.valueOf(m.get("by")),
                    String.valueOf(m.get("lsn")),
                    ((Number) m.get("at_ms")).longValue());
        } catch (JsonProcessingException | RuntimeException e) {
            return new Refusal(id, "", "", "unreadable entry: " + json, "", "", 0);
        }
    }
}
