package io.rebalance.cdc;

import io.rebalance.core.slot.Slot;
import io.rebalance.core.slot.SlotKeyspace;
import io.rebalance.core.slot.SlotRange;
import io.rebalance.protocol.handoff.Lsn;
import io.rebalance.protocol.keyspace.TailKeys;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;
import redis.clients.jedis.UnifiedJedis;

/**
 * The WAL position of the last change the tail applied in each slot, so the cutover verifies, in its blocked window,
 * only the slots changed since their last verification: a slot verified at WAL position W (the verifier waits until
 * the tail applied W before comparing) and changed last at L ≤ W needs nothing more. When slots come from a time
 * column or as key ranges a key does not name its slot, and every change counts for all slots ({@link #ALL}).
 */
public final class ChangedSlots {
    /** The field that stands for every slot. */
    public static final String ALL = "*";

    /** The field that holds the WAL position of the last TRUNCATE of the source table. */
    public static final String TRUNCATED = "truncated";

    private final UnifiedJedis redis;
    private final String key;
    private final SlotKeyspace keyspace;

    public ChangedSlots(UnifiedJedis redis, TailKeys keys, SlotKeyspace keyspace) {
        this.redis = redis;
        this.key = keys.changedSlots();
        this.keyspace = keyspace;
    }

    /** After the keys of a batch ending at {@code lsn} are in DynamoDB. */
    void record(Collection<String> keys, long lsn) {
        if (keys.isEmpty() || lsn == 0) return;
        Map<String, String> fields = new HashMap<>();
        String at = Lsn.text(lsn);
        if (!keyspace.keyNamesSlot()) {
            fields.put(ALL, at);
        } else {
            for (String k : keys) fields.put(keyspace.slotOfKey(k).orElseThrow().name(), at);
        }
        redis.hset(key, fields);
    }

    /**
     * Rows that came into the table without a change the stream carries (a partition attached with rows in it) lie in
     * {@code oldest..newest}: those slots count as changed at {@code lsn}, so each must be verified after it.
     */
    void arrived(Slot oldest, Slot newest, long lsn) {
        String at = Lsn.text(lsn);
        Map<String, String> fields = new HashMap<>();
        if (!keyspace.keyNamesSlot()) {
            fields.put(ALL, at);
        } else {
            for (Slot s : new SlotRange(newest, oldest)) fields.put(s.name(), at);
        }
        redis.hset(key, fields);
    }

    /** Rows left the table without a change the stream carries, from slots not known: every slot changed at lsn. */
    void everyRow(long lsn) {
        redis.hset(key, Map.of(ALL, Lsn.text(lsn)));
    }

    /**
     * A TRUNCATE at {@code lsn} changed every slot: the cutover then re-verifies every slot (their items are still in
     * DynamoDB, since the tail does not apply it) and refuses until each was verified after it.
     */
    void truncated(long lsn) {
        redis.hset(key, Map.of(ALL, Lsn.text(lsn), TRUNCATED, Lsn.text(lsn)));
    }

    /**
     * Every slot's last change, read in one round trip: the cutover asks for thousands of slots inside its blocked
     * window.
     */
    public Positions positions() {
        Map<String, Long> out = new HashMap<>();
        redis.hgetAll(key).forEach((slot, lsn) -> out.put(slot, Lsn.parse(lsn)));
        return new Positions(out);
    }

    /** A snapshot of {@link #positions()}. */
    public record Positions(Map<String, Long> bySlot) {
        /** The last TRUNCATE's WAL position, if the source table was ever truncated. */
        public Optional<Long> truncated() {
            return Optional.ofNullable(bySlot.get(TRUNCATED));
        }

        /** The slots the tail wrote, each by name (not the run-wide bucket, nor the TRUNCATE mark). */
        public SortedSet<Slot> slots() {
            SortedSet<Slot> out = new TreeSet<>();
            for (String name : bySlot.keySet()) {
                if (!name.equals(ALL) && !name.equals(TRUNCATED)) out.add(Slot.parse(name));
            }
            return out;
        }

        /** The last change's WAL position in {@code slot} (or in any slot, when keys do not name theirs). */
        public Optional<Long> lastChange(String slot) {
            long best = Math.max(bySlot.getOrDefault(slot, 0L), bySlot.getOrDefault(ALL, 0L));
            return best == 0 ? Optional.empty() : Optional.of(best);
        }
    }
}
