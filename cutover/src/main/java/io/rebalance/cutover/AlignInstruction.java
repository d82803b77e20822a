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
    OPEN_DYNAMO("open the DynamoDB fence to applications"),
    BEGIN_WRITE_LOG("start the log of the keys applications write to DynamoDB under the new route"),
    RECORD_ROUTE("record the new route and its epoch on both fences, Postgres first"),
    SET_ROUTE("set the route in Redis");

    /**
     * Towards SOURCE: the hold is lifted before Postgres reopens, so no application change can reach a held tail (which
     * would skip it and confirm the WAL past it); a death in between leaves both fences closed, refusing writes, and
     * the next command recovers.
     */
    public static final List<AlignInstruction> TO_SOURCE = List.of(CLOSE_DYNAMO, LIFT_HOLD, OPEN_POSTGRES);

    /** Towards TARGET: DynamoDB opens only after the tail has applied every Postgres change and holds. */
    public static final List<AlignInstruction> TO_TARGET = List.of(CLOSE_POSTGRES, HOLD_TAIL, OPEN_DYNAMO);

    /**
     * A flip, once the stores are set for the new route: the fences record it before Redis says it, so a route
     * applications may be using is always one the fences can give back when Redis loses it. A flip to DynamoDB starts
     * the log of written keys first, so no write under the new route can miss it.
     */
    public static final List<AlignInstruction> FLIP = List.of(BEGIN_WRITE_LOG, RECORD_ROUTE, SET_ROUTE);

    private final String what;

    AlignInstruction(String what) {
        this.what = what;
    }

    public String what() {
        return what;
    }
}
