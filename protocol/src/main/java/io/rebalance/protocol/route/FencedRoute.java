package io.rebalance.protocol.route;

import io.rebalance.protocol.fence.FenceState;
import io.rebalance.protocol.fence.FenceWriter;
import java.util.Optional;

/**
 * The route as the fences keep it, for when Redis lost its copy or holds an older one (ADR 8). Every flip records
 * its route and epoch on the Postgres fence before Redis changes, and on the DynamoDB fence too (a cutover with the
 * fence's opening, a rollback after its window), and an abort records the route it went back to, so the record with
 * the higher epoch is the route applications may be using. Which store admits applications says whether the stores
 * are aligned to it.
 */
public record FencedRoute(
        RouteStatus status, long epoch, boolean aligned, boolean conflict, long highWater, String detail) {

    public static FencedRoute of(FenceState postgres, FenceState dynamo) {
        FenceState newer = dynamo.epoch() > postgres.epoch() ? dynamo : postgres;
        RouteStatus status = newer.route();
        boolean pgApp = postgres.writer() == FenceWriter.APP;
        boolean dynamoApp = dynamo.writer() == FenceWriter.APP;
        boolean aligned = status == RouteStatus.SOURCE ? pgApp && !dynamoApp : dynamoApp && !pgApp;
        return new FencedRoute(
                status,
                newer.epoch(),
                aligned,
                pgApp && dynamoApp, // no order of the cutover's steps leaves both open: nothing may follow it
                Math.max(postgres.minToken(), dynamo.minToken()),
                "Postgres fence: " + postgres + "; DynamoDB fence: " + dynamo);
    }

    /**
     * Whether Redis' entry must give way to this one: it is gone, or a flip the fences recorded never reached it (a
     * failover to a replica that missed it, or a command that died between recording and flipping).
     */
    public boolean supersedes(Optional<Route> redis) {
        return redis.isEmpty()
                || (epoch > redis.get().epoch() && status != redis.get().status());
    }
}
