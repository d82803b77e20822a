package io.rebalance.verifier;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.refused.RefusedRows;
import io.rebalance.core.source.PartRows;
import java.time.Duration;

/**
 * How a {@link Verifier} verifies, given once when it is built: nothing about it changes afterwards.
 *
 * @param inFlight how a difference that may still be in flight is waited out before it counts
 * @param standby a hot standby of the source that fingerprints, pinpointing and re-checks read ({@code
 *     verify.jdbcUrl}; repairs read the source), or null to read the source. Only for {@code rebalance verify}: the
 *     cutover compares the stores as they are
 * @param standbyCatchup how long a re-check waits for the standby to replay the primary's position; null for {@code
 *     verify.settle} plus {@link Verifier#STANDBY_CATCHUP}
 * @param surveySparse a long span of a table sparse over its hours is surveyed before slots are verified alone (for
 *     {@code rebalance verify}, whose {@code --all} walks every hour of the run)
 * @param rows the rows compared: for a table moved part by part, those of the parts Postgres still keeps, or of one
 * @param settleByRows a slot whose fingerprints differ is settled with one query of per-row hashes instead of split
 *     (slots verified while they are written, the cutover's before its window, where splitting would descend into
 *     every part while the slot grows)
 * @param refused where repairs list the rows DynamoDB cannot hold, writing the others; null fails the slot at the
 *     first such row
 * @param repairs how repairs are written when not here (through a running tail, say), or null
 */
public record VerifyOptions(
        InFlight inFlight,
        MigrationConfig.Source standby,
        Duration standbyCatchup,
        boolean surveySparse,
        PartRows rows,
        boolean settleByRows,
        RefusedRows refused,
        Repairs repairs) {

    /** Every row, read from the source, differences split, repairs written here. */
    public static VerifyOptions of(InFlight inFlight) {
        return new VerifyOptions(inFlight, null, null, false, PartRows.ALL, false, null, null);
    }

    public VerifyOptions readingFrom(MigrationConfig.Source standby) {
        return readingFrom(standby, null);
    }

    public VerifyOptions readingFrom(MigrationConfig.Source standby, Duration catchup) {
        return new VerifyOptions(inFlight, standby, catchup, surveySparse, rows, settleByRows, refused, repairs);
    }

    public VerifyOptions surveyingSparse() {
        return new VerifyOptions(inFlight, standby, standbyCatchup, true, rows, settleByRows, refused, repairs);
    }

    public VerifyOptions only(PartRows only) {
        return new VerifyOptions(inFlight, standby, standbyCatchup, surveySparse, only, settleByRows, refused, repairs);
    }

    public VerifyOptions settlingByRows() {
        return new VerifyOptions(inFlight, standby, standbyCatchup, surveySparse, rows, true, refused, repairs);
    }

    public VerifyOptions recordingRefusals(RefusedRows into) {
        return new VerifyOptions(inFlight, standby, standbyCatchup, surveySparse, rows, settleByRows, into, repairs);
    }

    public VerifyOptions repairingThrough(Repairs through) {
        return new VerifyOptions(inFlight, standby, standbyCatchup, surveySparse, rows, settleByRows, refused, through);
    }
}
