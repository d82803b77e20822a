package io.rebalance.cutover;

import java.util.List;

/**
 * The single store moves inside an alignment ({@link Alignment#to}), which abort and recovery run, and inside a flip:
 * a command may die between any two of them, so their order is chosen so that every prefix leaves no write
 * unprotected (ADR 7, ADR 8).
 */
public enum AlignInstruction {
    CLOSE_DYNAMO("close the DynamoDB fence to applications"),
    LIFT_HOLD("let the forward tail apply again"),
    OPEN_POSTGRES("open the Postgres fence to applications"),
    CLOSE_POSTGRES("close the Postgres fence to applications"),
    HOLD_TAIL("hold the forward tail once it has applied everything up to now"),
    OPEN_DYNAMO("open the DynamoDB fence to applications (in a flip, recording the route in the same write)"),
    BEGIN_WRITE_LOG("start the log of the keys applications write to DynamoDB under the new route"),
    RECORD_ROUTE("record the new route and its epoch on the Postgres fence (ending the rollback window: on both)"),
    SET_ROUTE("set the route in Redis"),
    RECORD_ON_DYNAMO("record the route back on the DynamoDB fence, once writes resumed");

    /**
     * Towards SOURCE: the hold is lifted before Postgres reopens, so no application change can reach a held tail (which
     * would skip it and confirm the WAL past it); a death in between leaves both fences closed, refusing writes, and
     * the next command recovers.
     */
    public static final List<AlignInstruction> TO_SOURCE = List.of(CLOSE_DYNAMO, LIFT_HOLD, OPEN_POSTGRES);

    /** Towards TARGET: DynamoDB opens only after the tail has applied every Postgres change and holds. */
    public static final List<AlignInstruction> TO_TARGET = List.of(CLOSE_POSTGRES, HOLD_TAIL, OPEN_DYNAMO);

    /**
     * A cutover's flip to DynamoDB, once Postgres is closed, the tail held and the logged keys verified: the log of
     * written keys begun, so no write under the new route can miss it; the route recorded on the Postgres fence; the
     * DynamoDB fence opened with the route recorded in the same write; then Redis. The fences record the flip before
     * Redis says it, so a route applications may be using is always one the fences can give back when Redis loses it;
     * from the Postgres record on, a command that dies is recovered forward.
     */
    public static final List<AlignInstruction> FLIP = List.of(BEGIN_WRITE_LOG, RECORD_ROUTE, OPEN_DYNAMO, SET_ROUTE);

    /**
     * A flip back to Postgres: the route recorded on the Postgres fence, set in Redis, and recorded on the DynamoDB
     * fence only after writes resumed. The Postgres record, the newer, decides until then, and no guarded write checks
     * the DynamoDB fence while the route is SOURCE.
     */
    public static final List<AlignInstruction> FLIP_BACK = List.of(RECORD_ROUTE, SET_ROUTE, RECORD_ON_DYNAMO);

    private final String what;

    AlignInstruction(String what) {
        this.what = what;
    }

    public String what() {
        return what;
    }
}
