package io.rebalance.cutover;

import io.rebalance.protocol.handoff.TargetWriteLog;
import java.sql.SQLException;
import java.util.Collection;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The rollback's DRAIN_REVERSE step (ADR 9): once the reverse-stream batches that read items before DynamoDB closed
 * have ended, the keys applications wrote to DynamoDB since the flip are compared with their rows until every one is
 * equal in Postgres, within the write-block budget.
 */
final class RollbackDrain {
    /** Between two reads of the rows that still differ: the stream applies a batch in tens of milliseconds. */
    private static final long POLL_MS = 5;
    /** How long the stream's own rounds are waited for before one is asked for (it then lists the shards again). */
    private static final long ASK_AFTER_MS = 250;

    private final ReverseStreamView reverse;
    private final TargetWriteLog writeLog;
    private final Alignment stores;

    RollbackDrain(ReverseStreamView reverse, TargetWriteLog writeLog, Alignment stores) {
        this.reverse = reverse;
        this.writeLog = writeLog;
        this.stores = stores;
    }

    /**
     * DynamoDB takes no writes now (its fence is closed). A reverse-stream batch reads the items of its records under
     * the Postgres fence's lock, taken shared, and writes them back before it lets go; so once every batch holding the
     * lock has ended, every batch left reads final items, and a key once equal stays equal. A key that differs is a
     * stream record not delivered yet: DynamoDB Streams gives no bound on that, so this compares instead of waiting a
     * fixed time, reading only the rows again (the items are final, but for the slot attribute the stream sets on key
     * ranges after writing a row back: there the items are read again too). Fails when the write-block budget runs out.
     *
     * @param restartedLog whether the log was started again before the window ({@link LogRestart}): it then holds the
     *     keys written since and those that differed when every key was compared
     * @return what was compared, for the outcome
     */
    String drain(CommandRun run, DrainProof proof, long epoch, boolean restartedLog) throws Exception {
        // read after the fence closed: every write it admitted logged its keys before it was sent
        TargetWriteLog.Read logged = writeLog.read(epoch);
        if (!logged.complete() && !proof.comparesEveryKey()) throw new StepFailed(incompleteLog(logged));
        // the items are final since the fence closed: they are read while the stale batches end; the rows only after
        if (logged.keys().isPresent()) proof.readItems(logged.keys().get());
        awaitStaleBatches(run);
        if (logged.keys().isEmpty()) return everyKey(run, proof, logged);
        Collection<String> keys = logged.keys().get();
        long start = System.nanoTime();
        int compares = 1;
        Collection<String> differ = compare(run, proof, Optional.of(keys));
        long firstDiffering = differ.size();
        boolean asked = false;
        while (!differ.isEmpty()) {
            try {
                if (!asked && System.nanoTime() - start > TimeUnit.MILLISECONDS.toNanos(ASK_AFTER_MS)) {
                    // a record in a shard the stream has not listed yet waits for its next listing: ask for a round,
                    // which lists them; the rows are read meanwhile
                    reverse.drain().request();
                    asked = true;
                }
                run.remaining();
                Thread.sleep(POLL_MS); // the step has nothing to do but wait for the stream; one read per pause
                differ = compare(run, proof, Optional.of(differ));
                compares++;
            } catch (StepFailed spent) { // the budget ran out: say what kept Postgres closed
                throw stillDiffer(differ, compares + " compares", spent);
            }
        }
        return keys.size()
                + (restartedLog
                        ? " keys (written to DynamoDB since the log started again, or differing then)"
                        : " keys written to DynamoDB since the flip")
                + " equal in Postgres after " + compares + " compare" + (compares == 1 ? "" : "s")
                + (firstDiffering > 0 ? " (" + firstDiffering + " differed at the first)" : "");
    }

    /** Every key of both stores, compared after each reverse-stream round begun since the last compare. */
    private String everyKey(CommandRun run, DrainProof proof, TargetWriteLog.Read logged) throws Exception {
        drainRound(run);
        int rounds = 1;
        Collection<String> differ = compare(run, proof, Optional.empty());
        while (!differ.isEmpty()) {
            try {
                drainRound(run); // the records of what still differs were not delivered yet
                rounds++;
                differ = compare(run, proof, Optional.of(differ));
            } catch (StepFailed spent) {
                throw stillDiffer(differ, rounds + " reverse-stream rounds", spent);
            }
        }
        return "every key of both stores (" + logged.incomplete() + ") equal in Postgres after " + rounds
                + " reverse-stream round" + (rounds == 1 ? "" : "s");
    }

    /** Waits for the reverse-stream batches that may have read items before DynamoDB closed. */
    private void awaitStaleBatches(CommandRun run) throws Exception {
        try {
            stores.awaitReverseBatches(run.remaining());
        } catch (SQLException e) {
            if (!"55P03".equals(e.getSQLState())) throw e; // lock_not_available: the budget's lock_timeout
            throw new StepFailed("a reverse-stream batch (or a guarded write) held the Postgres fence's lock for the"
                    + " whole write-block budget; `rebalance status` shows the reverse stream");
        }
    }

    private StepFailed stillDiffer(Collection<String> differ, String tries, StepFailed spent) {
        String stream = reverse.notReady()
                .map(why -> "; the reverse stream cannot be relied on: " + why)
                .orElse("");
        return new StepFailed(differ.size() + " of the keys written to DynamoDB since the flip still differ in Postgres"
                + " after " + tries + " ("
                + String.join(", ", differ.stream().limit(5).toList())
                + (differ.size() > 5 ? ", ..." : "") + "): " + spent.getMessage() + stream
                + "; `rebalance verify --all` names what differs");
    }

    private void drainRound(CommandRun run) throws Exception {
        String id = reverse.drain().request();
        if (!reverse.drain().awaitDrained(id, run.remaining())) {
            throw new StepFailed("the reverse stream did not finish a round within the write-block budget;"
                    + " is `rebalance tail` running? (`rebalance status` shows the reverse stream's lag)");
        }
    }

    private static Collection<String> compare(CommandRun run, DrainProof proof, Optional<Collection<String>> keys)
            throws Exception {
        try {
            return proof.differing(keys, run.remaining());
        } catch (TimeoutException e) {
            throw new StepFailed("comparing the keys written since the flip did not finish within the write-block"
                    + " budget (" + e.getMessage() + ")");
        }
    }

    static String incompleteLog(TargetWriteLog.Read logged) {
        return "the log of the keys applications wrote to DynamoDB since the flip is incomplete: "
                + logged.incomplete() + " (it was complete when the rollback began: Redis lost it again since; run"
                + " the rollback again)";
    }
}
