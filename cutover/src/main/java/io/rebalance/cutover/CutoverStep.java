package io.rebalance.cutover;

/**
 * The named steps of the cutover commands (ADR 7); each command lists its own, in the order they run
 * ({@link Cutover#CUTOVER_STEPS}). Each is logged and persisted before it runs, so status and recovery know where a
 * command stopped; tests stop a command at any of them.
 */
public enum CutoverStep {
    PRECHECK("check the copy is finished, the tail keeps up and every slot verified recently"),
    PRE_VERIFY("while writes go on: log the keys the tail writes from now on, verify the slots changed since their"
            + " last verification, and compare the logged keys until few are left"),
    ACQUIRE("take the exclusive lease: new writes wait, running ones drain"),
    CLOSE_SOURCE("close the Postgres fence to applications"),
    NOTE_POSITION("note a WAL position M in Postgres"),
    AWAIT_TAIL("hold the forward tail at M and wait until it has applied everything up to M"),
    VERIFY("compare, row by row, the keys the tail wrote since the last comparison"),
    OPEN_TARGET("start the log of keys written to DynamoDB, record the flip on the Postgres fence, then open the"
            + " DynamoDB fence to this cutover's token and later ones, recording the flip on it in the same write"),
    FLIP("flip reads and writes to DynamoDB: the point of no return"),
    CLOSE_TARGET("close the DynamoDB fence to applications"),
    DRAIN_REVERSE("wait for the reverse-stream batches that read items before DynamoDB closed, then compare until every"
            + " key applications wrote to DynamoDB since the flip is equal in Postgres"),
    OPEN_SOURCE("open the Postgres fence to this rollback's token and later ones"),
    LIFT_HOLD("let the forward tail apply again"),
    FLIP_BACK("flip reads and writes back to Postgres: the point of no return"),
    CLOSE_WINDOW("end the rollback window: the route becomes FINAL"),
    RECOVER("bring the fences and the forward tail in line with the route"),
    RELEASE("release the exclusive lease: writes resume");

    private final String what;

    CutoverStep(String what) {
        this.what = what;
    }

    public String what() {
        return what;
    }
}
