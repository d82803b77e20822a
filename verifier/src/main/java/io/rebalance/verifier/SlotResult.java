package io.rebalance.verifier;

import java.util.List;

/**
 * The verification of one slot: the verdict, both sides' counts and fingerprints, the differences that persisted after the
 * re-check, how many were in flight (gone on re-check), the source WAL position and time it was taken at, and,
 * after {@code --repair}, the differences that were repaired before this verification.
 */
public record SlotResult(
        String slot,
        Verdict verdict,
        long sourceRows,
        long targetItems,
        String sourceFingerprint,
        String targetFingerprint,
        List<Difference> differences,
        int resolvedOnRecheck,
        String walLsn,
        long atMillis,
        long tookMillis,
        String error,
        List<Difference> repaired) {

    public enum Verdict {
        MATCH,
        MISMATCH,
        ERROR
    }

    static SlotResult error(String slot, long atMillis, String error) {
        return new SlotResult(slot, Verdict.ERROR, -1, -1, "", "", List.of(), 0, "", atMillis, 0, error, List.of());
    }
}
