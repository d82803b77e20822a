package io.rebalance.verifier;

import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.slot.Slot;
import io.rebalance.verifier.Difference.AttributeDifference;
import io.rebalance.verifier.Difference.Kind;
import io.rebalance.verifier.Pinpointer.Suspect;
import io.rebalance.verifier.SourceFingerprints.RowNow;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Verifies one slot: fingerprint Postgres (noting the WAL position), read and hash the slot's items, and if the two
 * fingerprints differ, pinpoint the suspect ids, wait for in-flight changes, and re-check each suspect by id on
 * both sides. Only what persists is reported, with the attributes that differ.
 */
final class SlotVerifier {
    /** Test hook, called after pinpointing and before the re-check (where an in-flight change would land). */
    @FunctionalInterface
    interface BeforeRecheck {
        void run(Slot slot, List<Suspect> suspects) throws Exception;

        BeforeRecheck NONE = (slot, suspects) -> {};
    }

    private final SourceFingerprints source;
    private final SlotItems items;
    private final CanonicalItem canonical;
    private final Pinpointer pinpointer;
    private final InFlight inFlight;
    private final BeforeRecheck hook;
    private final StandbyCatchup.Wait catchup;

    SlotVerifier(
            SourceFingerprints source,
            SlotItems items,
            CanonicalItem canonical,
            Pinpointer pinpointer,
            InFlight inFlight,
            BeforeRecheck hook) {
        this(source, items, canonical, pinpointer, inFlight, hook, StandbyCatchup.Wait.NONE);
    }

    private SlotVerifier(
            SourceFingerprints source,
            SlotItems items,
            CanonicalItem canonical,
            Pinpointer pinpointer,
            InFlight inFlight,
            BeforeRecheck hook,
            StandbyCatchup.Wait catchup) {
        this.catchup = catchup;
        this.source = source;
        this.items = items;
        this.canonical = canonical;
        this.pinpointer = pinpointer;
        this.inFlight = inFlight;
        this.hook = hook;
    }

    /** Suspects are re-read once the session's standby has replayed what the primary holds ({@link StandbyCatchup}). */
    SlotVerifier withCatchup(StandbyCatchup.Wait wait) {
        return new SlotVerifier(source, items, canonical, pinpointer, inFlight, hook, wait);
    }

    SlotResult verify(Connection c, Slot slot) throws Exception {
        long at = System.currentTimeMillis();
        String lsn = SourceFingerprints.walLsn(c);
        Fingerprint pg = source.slot(c, slot);
        SlotItems.Read dynamo = items.read(slot);
        if (pg.equals(dynamo.fingerprint())) return match(slot, pg, lsn, at, System.currentTimeMillis() - at);
        List<Suspect> suspects = pinpointer.find(c, slot, dynamo.hashes(), pg);
        inFlight.awaitPast(lsn);
        hook.run(slot, suspects);
        List<Difference> differences = recheck(c, slot, suspects);
        return new SlotResult(
                slot.name(),
                differences.isEmpty() ? SlotResult.Verdict.MATCH : SlotResult.Verdict.MISMATCH,
                pg.count(),
                dynamo.fingerprint().count(),
                pg.toString(),
                dynamo.fingerprint().toString(),
                differences,
                suspects.size() - differences.size(),
                lsn,
                at,
                System.currentTimeMillis() - at,
                null,
                List.of());
    }

    /**
     * A slot's Postgres fingerprint taken with its span's ({@link HourSpans}): the WAL position before it, when, and
     * this slot's share of the span's query time (the query's time divided by the span's slots).
     */
    record Spanned(Fingerprint fingerprint, String lsn, long at, long shareMillis) {}

    /**
     * Verifies a slot whose Postgres fingerprint was taken with its span's: equal to its items' is a MATCH, as {@link
     * #verify(Connection, Slot)} finds one; otherwise the slot is verified alone, from a fingerprint taken now.
     */
    SlotResult verify(Connection c, Slot slot, Spanned pg) throws Exception {
        long start = System.currentTimeMillis();
        if (!pg.fingerprint().equals(items.read(slot).fingerprint())) return verify(c, slot);
        // the slot's own time: its share of the span's query and its items' read, not the time since the span began
        return match(slot, pg.fingerprint(), pg.lsn(), pg.at(), pg.shareMillis() + System.currentTimeMillis() - start);
    }

    private static SlotResult match(Slot slot, Fingerprint both, String lsn, long at, long took) {
        return new SlotResult(
                slot.name(),
                SlotResult.Verdict.MATCH,
                both.count(),
                both.count(),
                both.toString(),
                both.toString(),
                List.of(),
                0,
                lsn,
                at,
                took,
                null,
                List.of());
    }

    /** Each suspect read again, by id and consistently, on both sides; what still differs is a difference. */
    List<Difference> recheck(Connection c, Slot slot, List<Suspect> suspects)
            throws SQLException, InterruptedException {
        if (suspects.isEmpty()) return List.of();
        List<String> ids = suspects.stream().map(Suspect::id).toList();
        catchup.await(c); // on a standby: rows no older than the items read next
        Map<String, RowNow> rows = source.now(c, slot, ids);
        Map<String, Map<String, AttributeValue>> found = items.get(ids);
        List<String> differing = new ArrayList<>();
        List<Difference> out = new ArrayList<>();
        for (String id : ids) {
            RowNow row = rows.get(id);
            Map<String, AttributeValue> item = found.get(id);
            boolean rowHere = row != null && row.inSlot();
            boolean itemHere = item != null && slot.name().equals(items.slotOf(item));
            if (rowHere && item == null) out.add(new Difference(id, Kind.MISSING, List.of()));
            else if (itemHere && row == null) out.add(new Difference(id, Kind.EXTRA, List.of()));
            else if ((rowHere && item != null) || (itemHere && row != null)) {
                boolean same = rowHere
                        && itemHere
                        && row.hash() == source.hashOf(canonical.encode(item))
                        && items.expectedSlotValue(slot, id).equals(items.slotValue(item));
                if (!same) differing.add(id);
            }
            // otherwise neither side has it in this slot any more: it moved or went, and is not this slot's concern
        }
        if (!differing.isEmpty()) {
            Map<String, List<String>> tokens = source.tokens(c, differing);
            for (String id : differing) {
                Map<String, AttributeValue> item = found.get(id);
                if (tokens.get(id) == null) { // the row was deleted a moment ago
                    if (items.slotOf(item) != null && slot.name().equals(items.slotOf(item)))
                        out.add(new Difference(id, Kind.EXTRA, List.of()));
                    continue;
                }
                out.add(new Difference(id, Kind.DIFFERENT, attributes(slot, id, rows.get(id), tokens.get(id), item)));
            }
        }
        out.sort(Comparator.comparing(Difference::id));
        return out;
    }

    /** What differs between a row and its item: the attributes, and the slot attribute. */
    List<AttributeDifference> attributes(
            Slot slot, String id, RowNow row, List<String> rowTokens, Map<String, AttributeValue> item) {
        List<AttributeDifference> out = new ArrayList<>();
        for (int i = 0; i < canonical.columnCount(); i++) {
            String want = rowTokens.get(i);
            String got = canonical.token(i, item);
            if (!want.equals(got)) out.add(new AttributeDifference(canonical.attribute(i), want, got));
        }
        for (String extra : canonical.unexpected(item)) {
            out.add(new AttributeDifference(extra, "(absent)", String.valueOf(item.get(extra))));
        }
        String found = items.slotValue(item);
        String expected = row.inSlot() ? items.expectedSlotValue(slot, id) : "(another slot)";
        boolean slotOk = row.inSlot()
                ? expected.equals(found)
                : !slot.name().equals(SlotIndex.slotName(found)); // in another slot, as the row is
        if (!slotOk) {
            out.add(new AttributeDifference(items.slotAttribute(), expected, found == null ? "(absent)" : found));
        }
        return out;
    }
}
