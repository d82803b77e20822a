package io.rebalance.protocol.route;

/**
 * Where a scope stands in its move, as its routing entry says. Reads and writes always point at the same store
 * (ADR 7): the status says which, and whether the move can still be undone.
 */
public enum RouteStatus {
    /** Postgres serves reads and writes; the forward tail keeps DynamoDB current. */
    SOURCE(Target.POSTGRES, Target.POSTGRES),
    /** DynamoDB serves reads and writes; the reverse tail keeps Postgres current, so rollback is possible. */
    TARGET(Target.DYNAMODB, Target.DYNAMODB),
    /** DynamoDB serves reads and writes; the rollback window is closed and Postgres is no longer kept current. */
    FINAL(Target.DYNAMODB, Target.DYNAMODB);

    private final Target read;
    private final Target write;

    RouteStatus(Target read, Target write) {
        this.read = read;
        this.write = write;
    }

    public Target read() {
        return read;
    }

    public Target write() {
        return write;
    }
}
