package io.rebalance.verifier;

import io.rebalance.core.slot.Slot;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code verify --all} on a table sparse over its hours: every hour's fingerprint from Postgres in one query and from
 * DynamoDB in one scan, so proving years of mostly empty hours costs what their rows cost.
 */
final class SparseSurvey {
    private static final Logger log = LoggerFactory.getLogger(SparseSurvey.class);
    /** Fewer slots than this are verified one by one without a survey: their queries cost less than a scan. */
    static final int SURVEY_MIN_HOURS = 100;
    /** A survey's hours travel as one array of bounds; spans beyond this (114 years) are verified one by one. */
    static final long SURVEY_MAX_HOURS = 1_000_000;
    /** A table with fewer rows per hour of the span than this on average is surveyed first. */
    static final long SPARSE_ROWS_PER_HOUR = 10;

    private final SourceFingerprints source;
    private final SlotItems items;
    /** Opens a session with the canonical expressions' settings. */
    private final Callable<Connection> sessions;

    SparseSurvey(SourceFingerprints source, SlotItems items, Callable<Connection> sessions) {
        this.source = source;
        this.items = items;
        this.sessions = sessions;
    }

    /**
     * With {@link Verifier#surveySparse}, a table sparse over its hours (fewer than {@value #SPARSE_ROWS_PER_HOUR}
     * rows per hour of the span on average, in Postgres and by DynamoDB's estimate of its items) is surveyed before any
     * slot is verified alone: every hour's fingerprint from Postgres in one query and from DynamoDB in one scan of the
     * table, so the cost follows the rows, not the hours. An hour whose two fingerprints
     * are equal is a MATCH (an empty hour too); the others are verified alone, pinpointed and re-checked as always.
     *
     * @return the hours that match and the slots left to verify alone, or empty when the slots were not surveyed (too
     *     few hours, or not sparse)
     */
    Optional<Outcome> survey(List<Slot> slots, int parallel) throws Exception {
        List<Slot> hours = slots.stream().filter(s -> !s.noTime()).sorted().toList();
        if (hours.size() < SURVEY_MIN_HOURS) return Optional.empty();
        Slot oldest = hours.get(0);
        Slot newest = hours.get(hours.size() - 1);
        long span = newest.slotsAfter(oldest) + 1;
        if (span > SURVEY_MAX_HOURS) return Optional.empty();
        try (Connection c = sessions.call()) {
            long sparse = span * SPARSE_ROWS_PER_HOUR;
            // both stores: the scan reads every item, and DynamoDB may hold far more than Postgres (after a TRUNCATE)
            if (!source.fewerRowsThan(c, sparse) || items.itemCountEstimate() >= sparse) return Optional.empty();
            long at = System.currentTimeMillis();
            String lsn = SourceFingerprints.walLsn(c); // before the read: a change committed before it is in it
            Map<Slot, Fingerprint> rows = source.hours(c, oldest, newest);
            Map<Slot, Fingerprint> found = items.scan(Math.max(1, parallel));
            List<Slot> left = new ArrayList<>();
            List<SlotResult> matched = new ArrayList<>();
            for (Slot slot : slots) {
                Fingerprint pg = rows.getOrDefault(slot, Fingerprint.EMPTY);
                Fingerprint dynamo = found.getOrDefault(slot, Fingerprint.EMPTY);
                if (slot.noTime() || !pg.equals(dynamo)) {
                    left.add(slot);
                    continue;
                }
                matched.add(new SlotResult(
                        slot.name(),
                        SlotResult.Verdict.MATCH,
                        pg.count(),
                        dynamo.count(),
                        pg.toString(),
                        dynamo.toString(),
                        List.of(),
                        0,
                        lsn,
                        at,
                        0,
                        null,
                        List.of()));
            }
            log.info(
                    "surveyed {} hours ({} with rows) in one query and one scan in {} ms; {} to verify alone",
                    span,
                    rows.size(),
                    System.currentTimeMillis() - at,
                    left.size());
            return Optional.of(new Outcome(matched, left));
        }
    }

    /** What a survey settled: hours whose fingerprints are equal, and the slots to verify alone. */
    record Outcome(List<SlotResult> matched, List<Slot> left) {}
}
