package io.rebalance.core.copy;

/**
 * The global status of a run, stored at {@code <prefix>status}. Commands write the TO_ states; the keeper turns
 * them into the settled ones once every process has acted on them.
 */
public enum RunStatus {
    NOT_STARTED,
    TO_START,
    IN_PROGRESS,
    TO_STOP,
    STOPPED,
    FINISHED;

    /** Workers copy only in these. */
    public boolean copying() {
        return this == TO_START || this == IN_PROGRESS;
    }

    public static RunStatus parse(String s) {
        return s == null ? NOT_STARTED : valueOf(s);
    }
}
