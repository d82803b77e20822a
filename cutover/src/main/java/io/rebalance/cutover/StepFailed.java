package io.rebalance.cutover;

/** A step could not be completed; before the point of no return the command puts everything back. */
final class StepFailed extends Exception {
    StepFailed(String reason) {
        super(reason);
    }

    StepFailed(String reason, Throwable cause) {
        super(reason, cause);
    }
}
