package io.rebalance.sim;

import io.rebalance.protocol.route.Target;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the simulated application was told: per row, how many of its writes were acknowledged. Every write sets or
 * adds one to {@code seq}, so a store must hold {@code base + acknowledged} exactly: less is a lost write, more is one
 * applied twice. A write that failed may or may not have landed; it widens the allowed range by one.
 */
public final class Ledger {
    /** One row's count. {@code base} is its seq before the simulation began (0 for a row the simulation inserted). */
    public static final class Entry {
        final long base;
        final AtomicLong acked = new AtomicLong();
        final AtomicLong failed = new AtomicLong();

        Entry(long base) {
            this.base = base;
        }

        /** The least seq a store of record holds: every acknowledged write applied. */
        public long floor() {
            return base + acked.get();
        }
    }

    private final Map<String, Entry> entries = new ConcurrentHashMap<>();
    private final List<String> readable = new ArrayList<>(); // ids with an acknowledged insert, to update and read
    private final Map<Target, AtomicLong> ackedBy = new EnumMap<>(Target.class);
    private final AtomicLong failures = new AtomicLong();

    public Ledger() {
        for (Target t : Target.values()) ackedBy.put(t, new AtomicLong());
    }

    /** A row that existed before the simulation, with its seq then. */
    void existing(String id, long seq) {
        entries.put(id, new Entry(seq));
        synchronized (readable) {
            readable.add(id);
        }
    }

    /** A row about to be inserted. */
    Entry inserting(String id) {
        Entry e = new Entry(0);
        entries.put(id, e);
        return e;
    }

    Entry entry(String id) {
        return entries.get(id);
    }

    void acknowledged(String id, Entry e, Target target, boolean insert) {
        e.acked.incrementAndGet();
        ackedBy.get(target).incrementAndGet();
        if (insert) {
            synchronized (readable) {
                readable.add(id);
            }
        }
    }

    void failed(Entry e) {
        e.failed.incrementAndGet();
        failures.incrementAndGet();
    }

    /** A random row with an acknowledged insert, or null before there is one. */
    String pick(Random random) {
        synchronized (readable) {
            return readable.isEmpty() ? null : readable.get(random.nextInt(readable.size()));
        }
    }

    /** A random row among the first {@code first} readable ones (the rows that existed before), or null. */
    String pickExisting(Random random, int first) {
        synchronized (readable) {
            int n = Math.min(first, readable.size());
            return n == 0 ? null : readable.get(random.nextInt(n));
        }
    }

    public long acknowledged(Target target) {
        return ackedBy.get(target).get();
    }

    public long failures() {
        return failures.get();
    }

    public int rows() {
        return entries.size();
    }

    /**
     * Compares a whole store (id → seq) with what was acknowledged; nothing may run meanwhile.
     *
     * @return one line per difference, at most {@code limit}; empty when the store holds every acknowledged write
     *     exactly once and nothing else
     */
    public List<String> check(String store, Map<String, Long> seqById, int limit) {
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, Entry> en : entries.entrySet()) {
            if (out.size() >= limit) return out;
            Entry e = en.getValue();
            Long held = seqById.get(en.getKey());
            long lo = e.floor();
            long hi = lo + e.failed.get();
            if (held == null) {
                if (lo > 0) out.add(store + " lacks id " + en.getKey() + " (" + lo + " acknowledged writes)");
            } else if (held < lo) {
                out.add(store + " lost writes of id " + en.getKey() + ": seq " + held + ", acknowledged " + lo);
            } else if (held > hi) {
                out.add(store + " applied a write twice to id " + en.getKey() + ": seq " + held + ", at most " + hi
                        + " sent");
            }
        }
        for (String id : seqById.keySet()) {
            if (out.size() >= limit) return out;
            if (!entries.containsKey(id)) out.add(store + " holds id " + id + ", which nobody wrote");
        }
        return out;
    }
}
