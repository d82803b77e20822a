package io.rebalance.client;

import io.rebalance.protocol.KeyText;
import io.rebalance.protocol.fence.DynamoFence;
import io.rebalance.protocol.fence.PostgresFence;
import io.rebalance.protocol.handoff.TargetWriteLog;
import io.rebalance.protocol.lock.LockLease;
import io.rebalance.protocol.route.Route;
import io.rebalance.protocol.route.RouteStatus;
import io.rebalance.protocol.route.Target;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;

/**
 * What a guarded write may do: write to {@link #target()}, fenced by its lease's token. Valid only inside the {@link
 * WriteGuard#write} call that gave it.
 */
public final class WritePermit {
    /** A guarded write that met other transactions on its fence stripe this many times in a row gives up. */
    private static final int FENCE_CONFLICT_ATTEMPTS = 8;

    private final Route route;
    private final LockLease lease;
    private final PostgresFence postgresFence;
    private final DynamoFence dynamoFence;
    private final TargetWriteLog writeLog;

    WritePermit(
            Route route,
            LockLease lease,
            PostgresFence postgresFence,
            DynamoFence dynamoFence,
            TargetWriteLog writeLog) {
        this.route = route;
        this.lease = lease;
        this.postgresFence = postgresFence;
        this.dynamoFence = dynamoFence;
        this.writeLog = writeLog;
    }

    /** The store this write must go to. */
    public Target target() {
        return route.write();
    }

    public Route route() {
        return route;
    }

    /** The fencing token the stores check. */
    public long token() {
        return lease.token();
    }

    public String holder() {
        return lease.member();
    }

    /**
     * Call first in the write's own Postgres transaction, then commit as usual (or use {@link #commitPostgres}, which
     * saves this round trip) (autocommit off, READ COMMITTED): it takes the scope's fence
     * lock shared until the transaction ends, then reads the fence. The role needs only SELECT on the fence table.
     *
     * @throws io.rebalance.protocol.fence.FencedException when Postgres no longer takes this writer's writes
     */
    public void fencePostgres(Connection c) throws SQLException {
        postgresFence.check(c, route.scope(), lease.token());
    }

    /**
     * Call instead of {@code c.commit()}, after the writes of the write's own Postgres transaction (autocommit off,
     * READ COMMITTED): checks the fence and commits only if it admits this writer, in one round trip, so the guard
     * costs no round trip more than a plain write. When it refuses, the transaction is rolled back.
     *
     * @throws io.rebalance.protocol.fence.FencedException when Postgres no longer takes this writer's writes
     */
    public void commitPostgres(Connection c) throws SQLException {
        postgresFence.commitIfAdmitted(c, route.scope(), lease.token());
    }

    /**
     * Writes {@code items} in one {@code TransactWriteItems} together with the check of a fence stripe drawn at random
     * (ADR 19); one that meets another transaction on that stripe goes again on another. While the rollback window
     * is open (route TARGET), first logs the keys it writes to the moved table, so a rollback can prove Postgres got
     * them (ADR 9): one Redis round trip more.
     *
     * @param dynamo the application's own client; may be null when the guard was built with one
     * @throws io.rebalance.protocol.fence.FencedException when DynamoDB no longer takes this writer's writes
     */
    public void writeDynamo(DynamoDbClient dynamo, TransactWriteItem... items) {
        if (route.status() == RouteStatus.TARGET) log(items);
        DynamoDbClient client = dynamo == null ? dynamoFence.client() : dynamo;
        for (int attempt = 1; ; attempt++) {
            List<TransactWriteItem> all = new ArrayList<>(items.length + 1);
            all.add(dynamoFence.conditionCheck(route.scope(), lease.token())); // a stripe drawn afresh each time
            all.addAll(List.of(items));
            try {
                client.transactWriteItems(b -> b.transactItems(all));
                return;
            } catch (TransactionCanceledException e) {
                // met another transaction on its fence stripe: nothing was applied, so it goes again on another
                if (!DynamoFence.conflictedOnFence(e) || attempt == FENCE_CONFLICT_ATTEMPTS)
                    throw dynamoFence.explain(e, route.scope(), lease.token());
            }
        }
    }

    /**
     * A key as the log holds it ({@link KeyText}), or null when an attribute is missing or neither a string nor a
     * number. DynamoDB stores an N key normalized ("01" is 1): it is logged as the verifier will read it back.
     */
    private static String keyText(Map<String, AttributeValue> key, List<String> attributes) {
        List<KeyText.Part> parts = new ArrayList<>(attributes.size());
        for (String attribute : attributes) {
            AttributeValue v = key.get(attribute);
            if (v != null && v.s() != null) parts.add(new KeyText.Part(v.s(), false));
            else if (v != null && v.n() != null)
                parts.add(new KeyText.Part(
                        new BigDecimal(v.n()).stripTrailingZeros().toPlainString(), true));
            else return null;
        }
        return KeyText.of(parts);
    }

    /** Before the write is sent: the keys it writes to the moved table, or a gap when they cannot be known. */
    private void log(TransactWriteItem... items) {
        long epoch = route.epoch();
        Optional<TargetWriteLog.Target> target = writeLog.target(epoch);
        if (target.isEmpty()) {
            writeLog.add(epoch, List.of()); // no log for this epoch (Redis lost it): marks it incomplete
            return;
        }
        List<String> keys = new ArrayList<>(items.length);
        for (TransactWriteItem item : items) {
            String table;
            Map<String, AttributeValue> key;
            if (item.put() != null) {
                table = item.put().tableName();
                key = item.put().item();
            } else if (item.update() != null) {
                table = item.update().tableName();
                key = item.update().key();
            } else if (item.delete() != null) {
                table = item.delete().tableName();
                key = item.delete().key();
            } else {
                continue; // a ConditionCheck writes nothing
            }
            if (!target.get().table().equals(TargetWriteLog.tableName(table))) continue;
            String text = keyText(key, target.get().keyAttributes());
            if (text == null) {
                writeLog.gap(
                        epoch,
                        "a write to " + table + " without a string or number "
                                + target.get().keyAttribute());
                continue;
            }
            keys.add(text);
        }
        if (!keys.isEmpty()) writeLog.add(epoch, keys);
    }
}
