package io.rebalance.protocol.fence;

import java.sql.SQLException;
import java.util.Optional;

/**
 * A store refused a write: the writer's lease lapsed and the scope has moved on since (ADR 7). Nothing of the write
 * was applied. The writer must not retry blindly with the same permit; a new guarded write re-reads the route.
 */
public final class FencedException extends RuntimeException {
    public FencedException(String store, String scope, long token, String state) {
        super(store + " refused a write to '" + scope + "' with fencing token " + token + " (fence: " + state
                + "): the writer's lease lapsed and the route may have changed since; nothing was written. Start a"
                + " new guarded write, which takes a new lease and reads the route again");
    }

    /**
     * Postgres' own refusal of a guarded write, by the fence's trigger ({@link FenceTrigger}): the write's statement
     * ran after the fence closed, before the commit's check could refuse it.
     */
    public FencedException(String scope, long token, SQLException refusal) {
        super(
                "Postgres refused a write to '" + scope + "' with fencing token " + token + " at its statement ("
                        + refusal.getMessage() + "): the writer's lease lapsed and the route may have changed since;"
                        + " nothing was written. Start a new guarded write, which takes a new lease and reads the"
                        + " route again",
                refusal);
    }

    /** @return the fence trigger's refusal in {@code e}'s causes, if a Postgres write was refused by it */
    public static Optional<SQLException> refusal(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLException s && FenceTrigger.REFUSED.equals(s.getSQLState())) {
                return Optional.of(s);
            }
        }
        return Optional.empty();
    }
}
