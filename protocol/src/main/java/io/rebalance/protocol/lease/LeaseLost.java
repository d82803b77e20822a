package io.rebalance.protocol.lease;

/**
 * A lease lapsed or passed to another holder: whoever held it must stop writing at once and leave the work to the
 * holder named here.
 */
public final class LeaseLost extends RuntimeException {
    private final String holder;

    /** @param holder the member that holds the lease now, or "" when nobody does (it lapsed) */
    public LeaseLost(String holder, String message) {
        super(message);
        this.holder = holder;
    }

    /** The LeaseLost in {@code t}'s cause chain (an SDK call wraps one thrown by an interceptor), or null. */
    public static LeaseLost in(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof LeaseLost lost) return lost;
        }
        return null;
    }

    /** The member that holds the lease now, or "" when it lapsed and nobody took it. */
    public String holder() {
        return holder;
    }
}
