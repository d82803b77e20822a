package io.rebalance.protocol.lease;

import java.util.List;

/**
 * The one reply shape of every lease script and every write a lease guards, single-holder or readers-writers:
 * {@code {status, member, remaining ms[, detail]}}.
 *
 * <ul>
 *   <li>status 1: granted, renewed, released or written for the caller; {@code member} is the caller's lease and
 *       {@code remaining} its TTL after the call (0 or negative when the call gave it up);
 *   <li>status 0: refused; {@code member} is who holds the lease now ({@code ""} for nobody: it lapsed) and
 *       {@code remaining} how long that holder keeps it (negative for nobody);
 *   <li>status 2: an exclusive request is registered and waits for shared holders (the lock's only wait).
 * </ul>
 *
 * A member is {@code <owner>#<token>}, so the fencing token travels with it. The detail is what a script adds: the
 * lease's expiry in Redis time (lock grants), what refused it ({@code exclusive} or {@code pending}), or how many
 * shared holders an exclusive request waits for.
 */
public record LeaseReply(int status, String member, long remainingMs, Object detail) {
    /** Reads a script's answer. */
    public static LeaseReply of(Object scriptResult) {
        List<?> r = (List<?>) scriptResult;
        return new LeaseReply(
                (int) number(r.get(0)),
                r.size() > 1 && r.get(1) != null ? String.valueOf(r.get(1)) : "",
                r.size() > 2 && r.get(2) != null ? number(r.get(2)) : -2,
                r.size() > 3 ? r.get(3) : null);
    }

    public boolean granted() {
        return status == 1;
    }

    /** An exclusive request waits for shared holders ({@link #detailNumber} of them). */
    public boolean pending() {
        return status == 2;
    }

    /** The fencing token of {@link #member}, or 0 when it names nobody. */
    public long token() {
        int hash = member.lastIndexOf('#');
        return hash < 0 ? 0 : Long.parseLong(member.substring(hash + 1));
    }

    /** The owner part of {@link #member} (all of it when it carries no token). */
    public String owner() {
        int hash = member.lastIndexOf('#');
        return hash < 0 ? member : member.substring(0, hash);
    }

    public String detailText() {
        return detail == null ? "" : String.valueOf(detail);
    }

    public long detailNumber() {
        return detail == null ? 0 : number(detail);
    }

    private static long number(Object o) {
        return o instanceof Long l ? l : Long.parseLong(String.valueOf(o));
    }
}
