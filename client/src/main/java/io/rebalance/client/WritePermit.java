package io.rebalance.client;

import io.rebalance.core.fence.DynamoFence;
import io.rebalance.core.fence.PostgresFence;
import io.rebalance.core.lock.Lease;
import io.rebalance.core.route.Route;
import io.rebalance.core.route.Target;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;
import software.amazon.awssdk.services.dynamodb.model.TransactionCanceledException;

/**
 * What a guarded write may do: write to {@link #target()}, fenced by its lease's token. Valid only inside the {@link
 * WriteGuard#write} call that gave it.
 */
public final class WritePermit {
    private final Route route;
    private final Lease lease;
    private final PostgresFence postgresFence;
    private final DynamoFence dynamoFence;

    WritePermit(Route route, Lease lease, PostgresFence postgresFence, DynamoFence dynamoFence) {
        this.route = route;
        this.lease = lease;
        this.postgresFence = postgresFence;
        this.dynamoFence = dynamoFence;
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
     * Call first in the write's own Postgres transaction (autocommit off): it share-locks the scope's fence row until
     * the transaction ends.
     *
     * @throws io.rebalance.core.fence.FencedException when Postgres no longer takes this writer's writes
     */
    public void fencePostgres(Connection c) throws SQLException {
        postgresFence.check(c, route.scope(), lease.token());
    }

    /**
     * Writes {@code items} in one {@code TransactWriteItems} together with the fence check.
     *
     * @param dynamo the application's own client; may be null when the guard was built with one
     * @throws io.rebalance.core.fence.FencedException when DynamoDB no longer takes this writer's writes
     */
    public void writeDynamo(DynamoDbClient dynamo, TransactWriteItem... items) {
        List<TransactWriteItem> all = new ArrayList<>(items.length + 1);
        all.add(dynamoFence.conditionCheck(route.scope(), lease.token()));
        all.addAll(List.of(items));
        try {
            (dynamo == null ? dynamoFence.client() : dynamo).transactWriteItems(b -> b.transactItems(all));
        } catch (TransactionCanceledException e) {
            throw dynamoFence.explain(e, route.scope(), lease.token());
        }
    }
}
