package io.rebalance.cdc.reverse;

import io.rebalance.cdc.TailHold;
import io.rebalance.cdc.TailLease;
import io.rebalance.cdc.TailScopes;
import io.rebalance.core.codec.RowDecoder;
import io.rebalance.core.retry.Backoff;
import io.rebalance.core.source.SourceSession;
import io.rebalance.protocol.fence.FenceState;
import io.rebalance.protocol.fence.FenceWriter;
import io.rebalance.protocol.fence.PostgresFence;
import io.rebalance.protocol.handoff.ForwardHold;
import io.rebalance.protocol.handoff.Lsn;
import io.rebalance.protocol.route.RouteStatus;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BatchGetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.KeysAndAttributes;

/**
 * Writes the keys a batch of stream records names into Postgres, as DynamoDB holds them now (ADR 7, point 6): the
 * stream gives keys, the store gives values, so a record applied twice or late writes the current state.
 *
 * <p>The gate, per scope (the table's, or each part's) in one Postgres transaction: the fence's lock is taken shared first and the row must say {@code reverse}, and
 * then the forward tail must be held (by the cutover's request in Redis, or by the fence itself: {@link TailHold}).
 * Both together mean applications write DynamoDB only, and DynamoDB already has every Postgres change: writing
 * DynamoDB's value cannot overwrite a Postgres change the forward tail has not carried over yet. The fence cannot
 * change before this transaction ends (the cutover's update waits for the lock). A fence that admits
 * applications skips the batch: its records are the forward tail's own writes, since DynamoDB admits no application
 * while Postgres does. So does a fence closed by a cutover that has not recorded its flip yet (its window), since the
 * last rollback drained every earlier DynamoDB write. Once a flip to DynamoDB is recorded, a tail not held yet makes
 * the batch wait (Redis lost the hold, say): DynamoDB may hold application writes, so the records are kept, never
 * skipped.
 */
final class ReverseApplier implements AutoCloseable {
    private static final int GET_BATCH = 100; // BatchGetItem's limit

    private final SourceSession session;
    private final DynamoDbClient dynamo;
    private final String targetTable;
    private final RowDecoder decoder;
    private final RowWriteBack writeBack;
    private final SlotMend mend;
    private final PostgresFence fence;
    private final TailScopes scopes;
    private final TailHold hold;
    private final TailLease lease;
    private Connection connection;
    private String waitingFor = "";

    ReverseApplier(
            SourceSession session,
            DynamoDbClient dynamo,
            String targetTable,
            RowDecoder decoder,
            RowWriteBack writeBack,
            SlotMend mend,
            PostgresFence fence,
            TailScopes scopes,
            TailHold hold,
            TailLease lease) {
        this.session = session;
        this.dynamo = dynamo;
        this.targetTable = targetTable;
        this.decoder = decoder;
        this.writeBack = writeBack;
        this.mend = mend;
        this.fence = fence;
        this.scopes = scopes;
        this.hold = hold;
        this.lease = lease;
    }

    /** What became of a batch. */
    enum Outcome {
        /** Written to Postgres. */
        APPLIED,
        /** Passed over: applications write Postgres, so these records are the forward tail's own writes. */
        SKIPPED,
        /** Not written and not passed: the gate may open for them; read them again later. */
        WAITING
    }

    /**
     * Each scope's keys (a part's, or the table's) pass that scope's gate, under its lock, in one transaction: the
     * keys of parts written back are written, those of parts that skip are passed over, and should any part wait the
     * whole batch waits (it is read again: writing the current items twice writes the same rows).
     *
     * @param keys DynamoDB keys, as stream records carry them; duplicates are fine
     */
    Outcome apply(Collection<Map<String, AttributeValue>> keys) throws SQLException {
        Map<String, Map<String, AttributeValue>> all = new LinkedHashMap<>();
        for (Map<String, AttributeValue> k : keys) all.put(decoder.key(k), k);
        List<List<String>> byScope = scopes.split(all.keySet());
        Connection c = connection();
        try {
            Map<String, Map<String, AttributeValue>> byKey = new LinkedHashMap<>();
            boolean waiting = false;
            for (int i = 0; i < scopes.size(); i++) {
                if (byScope.get(i).isEmpty()) continue;
                Outcome gate = gate(c, i); // in scope order: every batch takes the locks in one order
                if (gate == Outcome.WAITING) waiting = true;
                if (gate == Outcome.APPLIED) for (String k : byScope.get(i)) byKey.put(k, all.get(k));
            }
            if (waiting || byKey.isEmpty()) {
                c.rollback();
                return waiting ? Outcome.WAITING : Outcome.SKIPPED;
            }
            // read only now, under the fence's lock: a rollback waits for the batches holding it, so every batch
            // after that read its items after DynamoDB closed (ADR 9); reading before the gate would break that
            Map<String, Map<String, AttributeValue>> items = read(byKey);
            List<String[]> rows = new ArrayList<>(items.size());
            List<String> gone = new ArrayList<>();
            for (String key : byKey.keySet()) {
                Map<String, AttributeValue> item = items.get(key);
                if (item == null) gone.add(key);
                else rows.add(decoder.decode(item));
            }
            writeBack.upsert(c, rows);
            writeBack.delete(c, gone);
            Map<String, String> slots = mend.wrong(c, items);
            lease.check(); // a tail that lost its lease commits nothing: a newer one may be writing these keys
            c.commit();
            mend.set(slots); // after the commit: the rows are Postgres' before their items change again
            return Outcome.APPLIED;
        } catch (SQLException | RuntimeException e) {
            discard();
            throw e;
        }
    }

    private Outcome gate(Connection c, int scope) throws SQLException {
        FenceState f;
        try {
            f = fence.lockForReverse(c, scopes.names().get(scope));
        } catch (IllegalStateException notInstalled) {
            return Outcome.SKIPPED; // no fence row: no cutover was prepared, so no application writes DynamoDB
        }
        if (f.writer() != FenceWriter.REVERSE) return Outcome.SKIPPED;
        // a part whose window closed is DynamoDB's alone, as a whole table's is once the stream stops at FINAL
        if (f.route() == RouteStatus.FINAL) return Outcome.SKIPPED;
        ForwardHold.State held = hold.state(scope, f); // read under the share lock, see the class note
        if (held.phase() == ForwardHold.Phase.HELD) return Outcome.APPLIED;
        // a cutover's window: no flip to DynamoDB recorded yet, and the last rollback drained every earlier write
        if (f.route() == RouteStatus.SOURCE) return Outcome.SKIPPED;
        // not reached while ForwardHold.effective holds the tail once a flip is recorded (ADR 8, point 5); waiting
        // stays the safe answer should that rule change: neither written nor passed over
        waitingFor = "the forward tail to hold " + scopes.names().get(scope) + " (" + held.phase()
                + (held.request() == null
                        ? ""
                        : " at " + Lsn.text(held.request().lsn()) + (held.fromFence() ? ", by the fence" : ""))
                + "; applied up to " + Lsn.text(hold.appliedLsn()) + ")";
        return Outcome.WAITING;
    }

    /** Why the last batch that waited waited, for status. */
    String waitingFor() {
        return waitingFor;
    }

    /** Consistent reads of the current items, by the key's text. */
    private Map<String, Map<String, AttributeValue>> read(Map<String, Map<String, AttributeValue>> byKey) {
        Map<String, Map<String, AttributeValue>> out = new LinkedHashMap<>();
        List<Map<String, AttributeValue>> all = new ArrayList<>(byKey.values());
        for (int i = 0; i < all.size(); i += GET_BATCH) {
            List<Map<String, AttributeValue>> pending = all.subList(i, Math.min(all.size(), i + GET_BATCH));
            for (int attempt = 0; !pending.isEmpty(); attempt++) {
                List<Map<String, AttributeValue>> ask = pending;
                BatchGetItemResponse r = dynamo.batchGetItem(b -> b.requestItems(Map.of(
                        targetTable,
                        KeysAndAttributes.builder()
                                .keys(ask)
                                .consistentRead(true)
                                .build())));
                for (Map<String, AttributeValue> item : r.responses().getOrDefault(targetTable, List.of())) {
                    out.put(decoder.key(item), item);
                }
                KeysAndAttributes left = r.unprocessedKeys().get(targetTable);
                pending = left == null ? List.of() : left.keys();
                if (!pending.isEmpty()) backOff(attempt);
            }
        }
        return out;
    }

    /** DynamoDB returned unprocessed keys (throttling): back off as BatchWriter does before asking again. */
    private static void backOff(int attempt) {
        try {
            Thread.sleep(Backoff.DEFAULT.delay(Math.min(attempt, 6)).toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading items back", e);
        }
    }

    private Connection connection() throws SQLException {
        if (connection == null) {
            connection = session.open();
            connection.setAutoCommit(false);
            // the fence's read must see the row as it is once its lock is granted, whatever the database's default
            connection.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        }
        return connection;
    }

    private void discard() {
        if (connection == null) return;
        try {
            connection.close(); // a failed transaction is rolled back with it; the next batch opens a new one
        } catch (SQLException ignored) {
            // the connection is gone already
        }
        connection = null;
    }

    @Override
    public void close() {
        discard();
    }
}
