package io.rebalance.protocol;

/**
 * The one exception type that reaches a person. Its message names what failed, the state seen and the next
 * step; its {@link ErrorCode} decides the exit code. Retrying does not help with one of these: they are
 * permanent by construction, so retry loops let them through (see {@code Retrier}).
 */
public class RebalanceException extends RuntimeException {
    private final ErrorCode code;

    public RebalanceException(ErrorCode code, String message) {
        super(message);
        this.code = code;
    }

    public RebalanceException(ErrorCode code, String message, Throwable cause) {
        super(message, cause);
        this.code = code;
    }

    public ErrorCode code() {
        return code;
    }
}
