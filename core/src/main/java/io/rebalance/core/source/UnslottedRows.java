package io.rebalance.core.source;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.slot.SlotKeyspace;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Rows of the source table that no slot of the run holds, so neither the copy nor a verification reads them: rows
 * older than {@code slots.from}, or from {@code slots.to} up to the hour the run was planned in, when those are set,
 * but for the slots the tail wrote (verified whole all the same). Rows with no time are no such rows: they are {@link Slot#NO_TIME}'s. They would not
 * exist in DynamoDB after the flip, so {@code verify --all} counts them and the cutover refuses while any exist. Each
 * count stops at {@link #CAP}: it is a gate, not a census, and the queries are answered by the index on the key or the
 * time column.
 *
 * @param beforeFrom rows older than the oldest slot {@code slots.from} gives
 * @param fromTo rows from the hour after the newest slot {@code slots.to} gives up to the hour the run was planned in
 * @param window the window, for messages
 */
public record UnslottedRows(long beforeFrom, long fromTo, String window) {
    /** Counting stops here: a million rows in no slot say as much as a billion. */
    public static final long CAP = 1_000_000;

    /**
     * @param verified slots outside the window that are verified whole all the same (those the tail wrote: the
     *     cutover verifies every slot it changed, and {@code verify --all} every slot it wrote), whose rows count as
     *     in a slot
     * @param plannedAt when the run was planned (now, before any copy): rows of that hour on are the application's
     *     inserts since, which the tail carries (it ran before the copy could start), however far it lags
     */
    public static UnslottedRows count(
            Connection c, SourceTable table, MigrationConfig config, Collection<Slot> verified, Instant plannedAt)
            throws SQLException {
        SlotKeyspace keyspace = table.keyspace();
        String col = keyspace.column();
        boolean time = keyspace instanceof SlotKeyspace.TimeColumn;
        Instant from = config.slots().fromInstant();
        Instant to = config.slots().toInstant();
        // the rows of a slot verified whole are proven (or reported MISSING) there: leave them out of the count
        StringBuilder exempt = new StringBuilder();
        List<Object> exemptBounds = new ArrayList<>();
        for (Slot slot : verified) {
            exempt.append(" AND NOT (").append(keyspace.predicate(slot)).append(')');
            exemptBounds.addAll(List.of(keyspace.bounds(slot)));
        }
        long before = 0;
        if (from != null) {
            List<Object> bounds = new ArrayList<>();
            bounds.add(keyspace.bounds(Slot.containing(from))[0]);
            bounds.addAll(exemptBounds);
            before = count(c, table, col + " < ?" + (time ? " AND " + col + " > '-infinity'" : "") + exempt, bounds);
        }
        long after = 0;
        Slot lastInWindow = to == null ? null : Slot.containing(to.minusNanos(1));
        Slot planned = Slot.containing(plannedAt);
        if (lastInWindow != null && lastInWindow.isOlderThan(planned)) {
            List<Object> bounds = new ArrayList<>();
            bounds.add(keyspace.bounds(lastInWindow)[1]);
            bounds.add(keyspace.bounds(planned)[0]);
            bounds.addAll(exemptBounds);
            after = count(c, table, col + " >= ? AND " + col + " < ?" + exempt, bounds);
        }
        String window = (from == null ? "" : "slots.from " + from)
                + (from != null && to != null ? ", " : "")
                + (to == null ? "" : "slots.to " + to);
        return new UnslottedRows(before, after, window);
    }

    private static long count(Connection c, SourceTable table, String where, List<Object> bounds) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT count(*) FROM (SELECT 1 FROM " + table.name() + " WHERE " + where + " LIMIT " + CAP + ") s")) {
            for (int i = 0; i < bounds.size(); i++) ps.setObject(i + 1, bounds.get(i));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    public long total() {
        return beforeFrom + fromTo;
    }

    /** What they are and what to do, for a refusal; empty when there are none. */
    public String describe() {
        long outside = total();
        if (outside == 0) return "";
        return atLeast(outside) + " outside " + window
                + " (a window is for trying part of a table: unset slots.from and slots.to, copy, verify)";
    }

    private static String atLeast(long n) {
        return (n >= CAP ? "at least " : "") + String.format("%,d", n) + " row" + (n == 1 ? "" : "s");
    }
}
