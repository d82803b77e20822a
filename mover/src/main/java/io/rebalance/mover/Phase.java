package io.rebalance.mover;

/**
 * Named points in a slot's copy. Tests hook in here to pause, fail or kill a worker at an exact step (the way
 * Ghostferry's tests stop at named phases); production runs pass {@link PhaseHooks#NONE}.
 */
public enum Phase {
    /** The worker holds the slot's lease and knows where to resume. */
    LEASED,
    /** A page was read from Postgres and encoded; nothing of it is written yet. */
    PAGE_READ,
    /** The lease was renewed; the page is about to be written. */
    BEFORE_WRITE,
    /** The page is in DynamoDB; progress is not saved yet. */
    PAGE_WRITTEN,
    /** Progress (last_id) is saved. */
    PROGRESS_SAVED,
    /** The slot is FINISHED. */
    SLOT_FINISHED
}
