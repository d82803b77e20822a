package io.rebalance.cutover;

import io.rebalance.protocol.handoff.TargetWriteLog;
import java.util.Collection;
import java.util.Optional;
import java.util.concurrent.TimeoutException;

/**
 * The rollback's DRAIN_REVERSE step (ADR 9): reverse-stream rounds, each begun after DynamoDB closed, until every key
 * applications wrote to DynamoDB since the flip compares equal in Postgres, within the write-block budget.
 */
final class RollbackDrain {
    private final ReverseStreamView reverse;
    private final TargetWriteLog writeLog;

    RollbackDrain(ReverseStreamView reverse, TargetWriteLog writeLog) {
        this.reverse = reverse;
        this.writeLog = writeLog;
    }

    /**
     * Reverse-stream rounds until every key applications wrote to DynamoDB since the flip compares equal in Postgres.
     * DynamoDB takes no writes now (its fence is closed), and the reverse stream writes what DynamoDB holds, so a key
     * once equal stays equal, and a key that differs is a stream record not delivered yet: DynamoDB Streams gives no
     * bound on that, so this compares instead of waiting a fixed time. Fails when the write-block budget runs out.
     *
     * @param restartedLog whether the log was started again before the window ({@link LogRestart}): it then holds the
     *     keys written since and those that differed when every key was compared
     * @return what was compared, for the outcome
     */
    String drain(CommandRun run, DrainProof proof, long epoch, boolean restartedLog) throws Exception {
        drainRound(run);
        // read after the fence closed: every write it admitted logged its keys before it was sent
        TargetWriteLog.Read logged = writeLog.read(epoch);
        if (!logged.complete() && !proof.comparesEveryKey()) throw new StepFailed(incompleteLog(logged));
        Optional<Collection<String>> keys = logged.keys().map(k -> k);
        int rounds = 1;
        Collection<String> differ = compare(run, proof, keys);
        long firstDiffering = differ.size();
        while (!differ.isEmpty()) {
            try {
                drainRound(run); // the records of what still differs were not delivered yet
                rounds++;
                differ = compare(run, proof, Optional.of(differ));
            } catch (StepFailed spent) { // the budget ran out: say what kept Postgres closed
                throw stillDiffer(differ, rounds, spent);
            }
        }
        return (keys.isPresent()
                        ? keys.get().size()
                                + (restartedLog
                                        ? " keys (written to DynamoDB since the log started again, or differing"
                                                + " then)"
                                        : " keys written to DynamoDB since the flip")
                        : "every key of both stores (" + logged.incomplete() + ")")
                + " equal in Postgres after " + rounds + " reverse-stream round" + (rounds == 1 ? "" : "s")
                + (firstDiffering > 0 ? " (" + firstDiffering + " differed after the first)" : "");
    }

    private static StepFailed stillDiffer(Collection<String> differ, int rounds, StepFailed spent) {
        return new StepFailed(differ.size() + " of the keys written to DynamoDB since the flip still differ in Postgres"
                + " after " + rounds + " reverse-stream rounds ("
                + String.join(", ", differ.stream().limit(5).toList())
                + (differ.size() > 5 ? ", ..." : "") + "): " + spent.getMessage()
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
