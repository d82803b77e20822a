package io.rebalance.protocol.lock;

/** A lease lapsed or was taken over: its holder must stop, and what it writes now will be fenced. */
public final class LeaseLostException extends RuntimeException {
    private final transient Lease lease;

    public LeaseLostException(Lease lease, String why) {
        super("the " + lease.mode().name().toLowerCase(java.util.Locale.ROOT) + " lease " + lease.member() + " (token "
                + lease.token() + ") on scope '" + lease.keys().scope() + "' is lost: " + why);
        this.lease = lease;
    }

    public Lease lease() {
        return lease;
    }
}
