package io.rebalance.sim;

import io.rebalance.client.Router;
import io.rebalance.protocol.route.Target;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The application's reads: each asks the {@link Router} where to read, and is checked against the {@link Ledger}: a
 * read that starts after a write was acknowledged must see it, whichever store it reads.
 */
final class Readers {
    private final Ledger ledger;
    private final Router router;
    private final String scope;
    private final StoreSeqs stores;
    private final Consumer<String> error;
    private final Map<Target, AtomicLong> readsBy = new EnumMap<>(Target.class);
    private final List<String> staleReads = new ArrayList<>();
    /** Each reader keeps its own Postgres connection; {@link #closeConnections} closes them once they stop. */
    private final List<Reader> readers = new ArrayList<>();

    Readers(Ledger ledger, Router router, String scope, StoreSeqs stores, Consumer<String> error) {
        this.ledger = ledger;
        this.router = router;
        this.scope = scope;
        this.stores = stores;
        this.error = error;
        for (Target t : Target.values()) readsBy.put(t, new AtomicLong());
    }

    /** A new reader thread's work: one routed read per run. */
    Runnable reader(Random random) {
        Reader r = new Reader(random);
        readers.add(r);
        return r;
    }

    long reads(Target target) {
        return readsBy.get(target).get();
    }

    /** Reads that returned an older seq than one acknowledged before they began. */
    List<String> staleReads() {
        synchronized (staleReads) {
            return List.copyOf(staleReads);
        }
    }

    /** After the reader threads stopped, so no read is using them. */
    void closeConnections() {
        for (Reader r : readers) r.pg = StoreSeqs.closeQuietly(r.pg);
    }

    private final class Reader implements Runnable {
        private final Random random;
        private Connection pg;

        Reader(Random random) {
            this.random = random;
        }

        @Override
        public void run() {
            String id = ledger.pick(random);
            if (id == null) return;
            long floor = ledger.entry(id).floor(); // acknowledged before the read begins
            try {
                Target from = router.readTarget(scope);
                Long seq;
                if (from == Target.POSTGRES) {
                    if (pg == null) pg = stores.open();
                    seq = stores.postgres(pg, id);
                } else {
                    seq = stores.dynamo(id);
                }
                readsBy.get(from).incrementAndGet();
                if (seq == null || seq < floor) {
                    synchronized (staleReads) {
                        if (staleReads.size() < 20) {
                            staleReads.add("read of " + id + " from " + from + " gave seq " + seq + ", but " + floor
                                    + " writes were acknowledged before it began");
                        }
                    }
                }
            } catch (Exception e) {
                error.accept("read of " + id + " failed: " + e);
                pg = StoreSeqs.closeQuietly(pg);
            }
        }
    }
}
