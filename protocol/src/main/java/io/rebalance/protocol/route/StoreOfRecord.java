package io.rebalance.protocol.route;

import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.fence.DynamoFence;
import io.rebalance.protocol.fence.FenceState;
import io.rebalance.protocol.fence.FenceWriter;
import io.rebalance.protocol.fence.PostgresFence;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;

/**
 * Which store holds a scope's truth, and so whether DynamoDB may be written from Postgres rows: the one rule every
 * such write obeys (the copy, {@code verify --repair}, {@code --retry-refused}). Postgres is the store of record until
 * a cutover opens DynamoDB to applications; from then on a row read from Postgres may be older than the item it
 * would replace, and writing it would revert an application's write.
 *
 * <p>Read from the fences first, which outlive Redis (ADR 8), and from Redis' route too: any of them saying the
 * route left SOURCE, or the DynamoDB fence admitting applications, makes DynamoDB the store of record. Before
 * {@code cutover --prepare} installs the fences there is no route, and Postgres is the store of record.
 *
 * @param store the store of record
 * @param route the newest route any of the three records (SOURCE when none does)
 * @param epoch that route's epoch (0 when nothing was ever prepared)
 * @param detail what the fences and Redis said, for messages
 */
public record StoreOfRecord(Target store, RouteStatus route, long epoch, String detail) {

    /**
     * @param redisRoute the scope's entry in Redis' routing table, if Redis has one
     * @throws SQLException when the Postgres fence cannot be read
     */
    public static StoreOfRecord read(
            Connection pg, PostgresFence pgFence, DynamoFence dynamoFence, Optional<Route> redisRoute, String scope)
            throws SQLException {
        Optional<FenceState> postgres = pgFence.find(pg, scope);
        Optional<FenceState> dynamo;
        try {
            dynamo = dynamoFence.find(scope);
        } catch (DynamoDbException e) {
            // a role without rights on a fence table nobody installed yet (IAM before --prepare): nothing to read
            if (postgres.isPresent() || redisRoute.isPresent()) throw e;
            dynamo = Optional.empty();
        }
        List<String> seen = new ArrayList<>();
        List<Recorded> records = new ArrayList<>(); // each record of the route: its status and epoch
        postgres.ifPresent(f -> {
            seen.add("Postgres fence: " + f);
            records.add(new Recorded(f.route(), f.epoch()));
        });
        dynamo.ifPresent(f -> {
            seen.add("DynamoDB fence: " + f);
            records.add(new Recorded(f.route(), f.epoch()));
        });
        redisRoute.ifPresent(r -> {
            seen.add("Redis: route " + r.status() + " at epoch " + r.epoch());
            records.add(new Recorded(r.status(), r.epoch()));
        });
        long epoch = records.stream().mapToLong(Recorded::epoch).max().orElse(0);
        // the newest record is the route (ADR 8); two at that epoch that disagree are a flip cut short: not SOURCE
        RouteStatus route = records.stream()
                .filter(r -> r.epoch() == epoch)
                .map(Recorded::status)
                .filter(st -> st != RouteStatus.SOURCE)
                .findFirst()
                .orElse(RouteStatus.SOURCE);
        boolean dynamoOpen = dynamo.map(f -> f.writer() == FenceWriter.APP).orElse(false);
        boolean postgresIsTruth = route == RouteStatus.SOURCE && !dynamoOpen;
        return new StoreOfRecord(
                postgresIsTruth ? Target.POSTGRES : Target.DYNAMODB,
                route,
                epoch,
                seen.isEmpty() ? "no cutover was prepared (no fence, no route)" : String.join("; ", seen));
    }

    /** One record of the route: a fence's copy, or Redis' entry. */
    private record Recorded(RouteStatus status, long epoch) {}

    public boolean postgres() {
        return store == Target.POSTGRES;
    }

    /** One line for messages: which store, the route and its epoch. */
    public String describe() {
        if (postgres()) return "Postgres is the store of record (route " + route + ", epoch " + epoch + ")";
        return "DynamoDB is the store of record: the route is " + route + " at epoch " + epoch
                + (route == RouteStatus.SOURCE
                        ? ", and the DynamoDB fence admits applications (a cutover is in its"
                                + " window, or stopped in it)"
                        : "");
    }

    /**
     * Refuses a write of Postgres rows into DynamoDB unless Postgres is the store of record; nothing is written.
     *
     * @param what the write, e.g. "copy"
     * @param instead what to do instead
     * @throws RebalanceException {@link ErrorCode#NOT_STORE_OF_RECORD} naming the route, its epoch and {@code instead}
     */
    public void requirePostgres(String what, String instead) {
        if (postgres()) return;
        throw new RebalanceException(
                ErrorCode.NOT_STORE_OF_RECORD,
                what + " refused, nothing written: " + describe() + ". Writing rows from Postgres into DynamoDB now"
                        + " would put older values over the applications' writes there and bring back items they"
                        + " deleted (" + detail + "). " + instead);
    }
}
