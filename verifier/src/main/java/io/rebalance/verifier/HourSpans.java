package io.rebalance.verifier;

import io.rebalance.core.slot.Slot;
import java.util.ArrayList;
import java.util.List;

/**
 * Slots cut into spans of consecutive hours, each fingerprinted by Postgres in one query ({@link
 * SourceFingerprints#hours}). A query per hour reads a page once for every hour it holds rows of (all of them, on a
 * table not written in time order) and pays an index scan per hour; a query per span reads the span's pages once. A
 * span holds at most {@value #MAX_HOURS} hours and about {@value #SPAN_ROWS} rows by the table's average, so one query
 * stays seconds long, and there are at least as many spans as threads, so every thread has one.
 */
final class HourSpans {
    static final int MAX_HOURS = 168;
    static final long SPAN_ROWS = 1_000_000;
    /**
     * A span's query is cancelled after this, well before the session's socket timeout (120 s), and the span is cut
     * in two: a span the table's average misjudged (its rows crowded into a few hours) costs one wasted query.
     */
    static final int TIMEOUT_SECONDS = 60;

    private HourSpans() {}

    /**
     * @param rows the table's rows (an estimate): over {@code slots}' hours, an upper bound on their average
     * @return runs of adjacent hours in the order given, each one span; the no-time slot and isolated hours alone
     */
    static List<List<Slot>> split(List<Slot> slots, int parallel, long rows) {
        long hours = slots.stream().filter(s -> !s.noTime()).count();
        long byThreads = hours / Math.max(1, parallel);
        long byRows = SPAN_ROWS * hours / Math.max(1, rows);
        int size = (int) Math.max(1, Math.min(MAX_HOURS, Math.min(byThreads, byRows)));
        List<List<Slot>> out = new ArrayList<>();
        List<Slot> run = new ArrayList<>();
        for (Slot s : slots) {
            if (s.noTime()) {
                out.add(List.of(s));
                continue;
            }
            if (!run.isEmpty() && (run.size() == size || !continues(run, s))) {
                out.add(run);
                run = new ArrayList<>();
            }
            run.add(s);
        }
        if (!run.isEmpty()) out.add(run);
        return out;
    }

    /** Whether {@code next} is the hour after (or before) the run's last, in the run's direction. */
    private static boolean continues(List<Slot> run, Slot next) {
        Slot last = run.get(run.size() - 1);
        if (run.size() == 1) return next.equals(last.older()) || next.equals(last.newer());
        boolean olderFirst = run.get(0).isOlderThan(last);
        return next.equals(olderFirst ? last.newer() : last.older());
    }

    /** The span's first half and its second, in its order. */
    static List<List<Slot>> halves(List<Slot> span) {
        return List.of(span.subList(0, span.size() / 2), span.subList(span.size() / 2, span.size()));
    }

    /** The oldest hour of a span. */
    static Slot oldest(List<Slot> span) {
        return span.get(0).isOlderThan(span.get(span.size() - 1)) ? span.get(0) : span.get(span.size() - 1);
    }

    /** The newest hour of a span. */
    static Slot newest(List<Slot> span) {
        return span.get(0).isOlderThan(span.get(span.size() - 1)) ? span.get(span.size() - 1) : span.get(0);
    }
}
