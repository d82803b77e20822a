package io.rebalance.cutover;

import io.rebalance.core.source.SourceSession;
import io.rebalance.protocol.fence.DynamoFence;
import io.rebalance.protocol.fence.FenceState;
import io.rebalance.protocol.fence.FenceWriter;
import io.rebalance.protocol.fence.PostgresFence;
import io.rebalance.protocol.handoff.ForwardHold;
import io.rebalance.protocol.handoff.Lsn;
import io.rebalance.protocol.route.FencedRoute;
import io.rebalance.protocol.route.RouteStatus;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;

/**
 * The store-side moves of every command, and the one rule that undoes them: the route is the truth, and the fences
 * and the forward tail follow it ({@link #to}). An abort before the flip aligns to the route as it still is, and so
 * does recovery after a command died, whatever step it reached. Every move is idempotent.
 *
 * <ul>
 *   <li>{@code SOURCE}: the DynamoDB fence admits nobody, the tail applies, then the Postgres fence admits
 *       applications.
 *   <li>{@code TARGET}, {@code FINAL}: the Postgres fence admits only the reverse stream, the forward tail holds
 *       (acknowledged, so DynamoDB has every Postgres change), then the DynamoDB fence admits applications.
 * </ul>
 */
final class Alignment {
    private final SourceSession session;
    private final PostgresFence pgFence;
    private final DynamoFence dynamoFence;
    private final ForwardHold hold;
    private final String scope;

    Alignment(SourceSession session, PostgresFence pgFence, DynamoFence dynamoFence, ForwardHold hold, String scope) {
        this.session = session;
        this.pgFence = pgFence;
        this.dynamoFence = dynamoFence;
        this.hold = hold;
        this.scope = scope;
    }

    /**
     * @param tailWait how long to wait for the forward tail to acknowledge a hold, when one is needed
     * @param hooks called before each store move ({@link AlignInstruction}, in its order there)
     */
    void to(RouteStatus route, long token, Duration tailWait, CutoverHooks hooks) throws Exception {
        if (route == RouteStatus.SOURCE) {
            hooks.inside(AlignInstruction.CLOSE_DYNAMO);
            dynamoFence.set(scope, FenceWriter.NONE, token);
            hooks.inside(AlignInstruction.LIFT_HOLD);
            hold.lift(); // before Postgres reopens: a held tail would skip the applications' changes
            hooks.inside(AlignInstruction.OPEN_POSTGRES);
            setPostgres(FenceWriter.APP, token, Duration.ofSeconds(30));
            return;
        }
        hooks.inside(AlignInstruction.CLOSE_POSTGRES);
        if (postgres().writer() != FenceWriter.REVERSE) setPostgres(FenceWriter.REVERSE, token, Duration.ofSeconds(30));
        hooks.inside(AlignInstruction.HOLD_TAIL);
        if (hold.state().phase() != ForwardHold.Phase.HELD) holdTail(tailWait);
        hooks.inside(AlignInstruction.OPEN_DYNAMO);
        FenceState d = dynamoFence.state(scope);
        if (d.writer() != FenceWriter.APP || d.minToken() < token) dynamoFence.set(scope, FenceWriter.APP, token);
    }

    FenceState postgres() throws SQLException {
        try (Connection c = session.open()) {
            return pgFence.state(c, scope);
        }
    }

    FenceState dynamo() {
        return dynamoFence.state(scope);
    }

    /** The route as the fences keep it (ADR 8); empty when they were never installed. */
    Optional<FencedRoute> fenced() throws SQLException {
        Optional<FenceState> pg;
        try (Connection c = session.open()) {
            pg = pgFence.find(c, scope);
        }
        if (pg.isEmpty()) return Optional.empty();
        try {
            return Optional.of(FencedRoute.of(pg.get(), dynamoFence.state(scope)));
        } catch (ResourceNotFoundException | IllegalStateException notInstalled) {
            return Optional.empty();
        }
    }

    /** Records {@code route} and its epoch on both fences, Postgres first (ADR 8), under {@code token}. */
    void record(RouteStatus route, long epoch, long token, Duration lockWait) throws SQLException {
        recordOnPostgres(route, epoch, token, lockWait);
        recordOnDynamo(route, epoch);
    }

    /**
     * Records {@code route} and its epoch on the Postgres fence alone: its record decides while it is the newer.
     *
     * @throws io.rebalance.protocol.fence.TokenBehindException when another command set the fence with a newer token
     */
    void recordOnPostgres(RouteStatus route, long epoch, long token, Duration lockWait) throws SQLException {
        try (Connection c = session.open()) {
            pgFence.record(c, scope, route, epoch, token, lockWait);
        }
    }

    /** Records {@code route} and its epoch on the DynamoDB fence; an epoch it already passed changes nothing. */
    void recordOnDynamo(RouteStatus route, long epoch) {
        dynamoFence.record(scope, route, epoch);
    }

    /**
     * Waits at most {@code lockWait} for transactions that checked the fence.
     *
     * @return the fence's state as the set found it under its lock: the route and epoch the set leaves as they are
     */
    FenceState setPostgres(FenceWriter writer, long token, Duration lockWait) throws SQLException {
        try (Connection c = session.open()) {
            return pgFence.set(c, scope, writer, token, lockWait);
        }
    }

    /**
     * Waits at most {@code lockWait} for the reverse-stream batches (and guarded writes) holding the fence's lock: each
     * takes it before it reads items, so every batch left after this read them after this call began.
     */
    void awaitReverseBatches(Duration lockWait) throws SQLException {
        try (Connection c = session.open()) {
            pgFence.awaitHolders(c, scope, lockWait);
        }
    }

    /** Opens the DynamoDB fence to {@code token} and records {@code route} there, in one write. @return the fence */
    FenceState openDynamoAndRecord(long token, RouteStatus route, long epoch) {
        return dynamoFence.setAndRecord(scope, FenceWriter.APP, token, route, epoch);
    }

    /** @return the fence as set (route and epoch unchanged) */
    FenceState setDynamo(FenceWriter writer, long token) {
        return dynamoFence.set(scope, writer, token);
    }

    /** A logical message: decoded at once, so the tail has an event at M to pass even on an idle table. */
    long notePosition() throws SQLException {
        try (Connection c = session.open();
                Statement st = c.createStatement();
                ResultSet rs =
                        st.executeQuery("SELECT pg_logical_emit_message(false, 'rebalance.cutover', '')::text")) {
            rs.next();
            return Lsn.parse(rs.getString(1));
        }
    }

    /** @throws StepFailed when the tail did not acknowledge in time */
    void holdTail(long lsn, Duration wait) throws StepFailed, InterruptedException, SQLException {
        long deadline = System.nanoTime() + wait.toNanos();
        ForwardHold.Request request = hold.request(lsn);
        if (hold.awaitHeld(request, min(wait, NUDGE_AFTER))) return;
        // The tail answers after a batch that read the request; the batch carrying lsn may have read the hold before
        // the request existed, and with applications closed out no change follows to make another batch (but the
        // stream's heartbeat, seconds away). A logical message after the request makes one.
        notePosition();
        if (!hold.awaitHeld(request, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))) {
            throw new StepFailed("the forward tail did not apply up to " + Lsn.text(lsn) + " and acknowledge within "
                    + wait.toMillis() + " ms; is `rebalance tail` running and caught up? (`rebalance status`)");
        }
    }

    /** How long the tail may take to answer before a logical message gives it a batch to answer with. */
    static final Duration NUDGE_AFTER = Duration.ofMillis(50);

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    private void holdTail(Duration wait) throws Exception {
        holdTail(notePosition(), wait);
    }

    void liftHold() {
        hold.lift();
    }
}
