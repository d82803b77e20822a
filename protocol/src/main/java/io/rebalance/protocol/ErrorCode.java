package io.rebalance.protocol;

/**
 * Every way a command can fail for a reason a person can act on, each with its own process exit code.
 *
 * <p>Codes 1 and 2 are kept for commands whose result is a verdict (verify: 1 = mismatch, 2 = error);
 * the rest start at 10 so a script can tell a bad config from an unreachable service without parsing text.
 */
public enum ErrorCode {
    CONFIG_INVALID(10, "configuration is invalid"),
    SOURCE_UNREACHABLE(11, "Postgres is unreachable"),
    SOURCE_TABLE_MISSING(12, "source table does not exist"),
    SOURCE_COLUMN_MISSING(13, "source column does not exist"),
    SOURCE_KEY_TYPE(14, "source key column has a type rebalance cannot slot"),
    REDIS_UNREACHABLE(15, "Redis is unreachable"),
    TARGET_UNREACHABLE(16, "DynamoDB is unreachable"),
    TARGET_TABLE_MISSING(17, "DynamoDB table does not exist"),
    TARGET_KEY_SCHEMA(18, "DynamoDB key schema does not fit the source"),
    TIME_RANGE_INVALID(19, "time range is invalid"),
    RUN_CONFLICT(20, "Redis already holds a different run under this prefix"),
    ROW_REFUSED(21, "a row cannot be stored in DynamoDB"),
    INTERRUPTED(22, "interrupted"),
    WAL_LEVEL(23, "Postgres wal_level is not logical"),
    REPLICATION_ROLE(24, "the Postgres role cannot replicate"),
    SOURCE_NO_PRIMARY_KEY(25, "the source table has no primary key the change stream can name rows by"),
    REPLICATION_SLOT_BUSY(26, "the replication slot is in use by another process"),
    NO_CHANGE_STREAM(27, "no replication slot covers the copy"),
    TAIL_LEASE_LOST(28, "this tail lost its lease to another"),
    TAIL_OFFSETS_GONE(29, "the tail's saved position is no longer in the replication slot"),
    NO_FREE_REPLICATION_SLOT(30, "Postgres has no free replication slot for the tail"),
    CUTOVER_REFUSED(31, "the cutover's pre-checks failed, or the route is not in a state this command starts from"),
    CUTOVER_ABORTED(32, "the cutover stopped before its point of no return and put everything back"),
    CUTOVER_INTERRUPTED(
            33, "an earlier cutover stopped mid-way; `rebalance cutover --recover` brings the stores in line"),
    TAIL_SLOT_LOST(34, "Postgres invalidated the tail's replication slot: changes since are gone from the stream"),
    SCHEMA_CHANGED(35, "the source table's columns changed since the run was planned"),
    NOT_STORE_OF_RECORD(
            36, "Postgres is no longer the store of record: nothing writes its rows into DynamoDB after the flip"),
    PORT_IN_USE(37, "the port to serve metrics or the dashboard on is taken or not allowed"),
    PARTS_CHANGED(
            38,
            "cutover.parts differs from the parts a part is moving under; change it only while every part is"
                    + " on SOURCE"),
    PART_UNKNOWN(39, "the table has parts and the command names none, or one the table does not have"),
    ROUTE_MISSING(40, "the scope has no routing entry: `rebalance cutover --prepare` makes it"),
    INTERNAL(70, "internal error");

    private final int exitCode;
    private final String summary;

    ErrorCode(int exitCode, String summary) {
        this.exitCode = exitCode;
        this.summary = summary;
    }

    public int exitCode() {
        return exitCode;
    }

    public String summary() {
        return summary;
    }
}
