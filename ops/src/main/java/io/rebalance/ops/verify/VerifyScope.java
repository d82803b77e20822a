package io.rebalance.ops.verify;

import io.rebalance.cdc.ChangedSlots;
import io.rebalance.cdc.RepairQueue;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.config.Redact;
import io.rebalance.core.copy.RunPlan;
import io.rebalance.core.copy.RunStatus;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.core.source.UnslottedRows;
import io.rebalance.mover.RunPlanner;
import io.rebalance.mover.SlotStore;
import io.rebalance.ops.Connections;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.verifier.Repairs;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * What {@code rebalance verify} verifies and how, composed from the parts: the slots {@code --all} means, the rows no
 * slot holds, the slots the copy may still write, the database it can hash, and where repairs go while a tail runs.
 */
public final class VerifyScope {
    private VerifyScope() {}

    /**
     * Every slot that holds rows in Postgres or may hold items in DynamoDB: the run's plan (what was copied), the
     * table's range now (rows inserted into hours newer, or older, than the plan), and every slot the tail has written
     * (including deletes of rows that were there). With both slots.from and slots.to set, the configured window stands
     * in for the table's range; rows outside it are counted ({@link UnslottedRows}), not verified.
     */
    public static List<Slot> allSlots(MigrationConfig config, Connections c, Connection pg, SourceTable table)
            throws SQLException {
        RunPlan plan = c.runState().plan();
        Set<Slot> out = new TreeSet<>();
        if (plan != null) plan.range().forEach(out::add);
        try {
            new RunPlanner(config).range(pg, table).forEach(out::add);
        } catch (RebalanceException e) {
            if (plan == null) throw e; // no plan and an empty table: nothing to verify, and the error says so
        }
        // with a window too: a slot the tail wrote outside it holds rows the copy never read, which must show
        out.addAll(tailWritten(config, c, table));
        return new ArrayList<>(out);
    }

    /**
     * A slot named on the command line must be one of the run's: an hour from its first to its last (the span
     * {@link #allSlots} covers), or the slot of rows with no time when the run has one. Any other slot holds nothing
     * by definition, and a MATCH of nothing would read as proof.
     *
     * @throws RebalanceException CONFIG_INVALID naming the slot, the run's first and last hour, and the way out
     */
    public static void requireSlotsOfRun(List<Slot> named, List<Slot> ofRun) {
        List<Slot> hours = ofRun.stream().filter(s -> !s.noTime()).sorted().toList();
        boolean noTime = ofRun.stream().anyMatch(Slot::noTime);
        for (Slot s : named) {
            boolean in = s.noTime()
                    ? noTime
                    : !hours.isEmpty()
                            && !s.isOlderThan(hours.get(0))
                            && !hours.get(hours.size() - 1).isOlderThan(s);
            if (in) continue;
            String span = hours.isEmpty()
                    ? "the run has no hours"
                    : "the run's slots run from " + hours.get(0) + " (its first) to " + hours.get(hours.size() - 1)
                            + " (its last)" + (noTime ? ", and " + Slot.NO_TIME_NAME + " (rows with no time)" : "");
            throw new RebalanceException(
                    ErrorCode.CONFIG_INVALID,
                    "--slot " + s + " is not a slot of the run: " + span + ". Name slots in that span, or use --all");
        }
    }

    /** The rows no slot of --all holds: outside slots.from/slots.to, up to the hour the run was planned in. */
    public static UnslottedRows unslotted(MigrationConfig config, Connections c, Connection pg, SourceTable table)
            throws SQLException {
        RunPlan plan = c.runState().plan();
        return UnslottedRows.count(
                pg,
                table,
                config,
                tailWritten(config, c, table),
                plan == null ? Instant.now() : Instant.ofEpochMilli(plan.createdMs()));
    }

    private static Set<Slot> tailWritten(MigrationConfig config, Connections c, SourceTable table) {
        if (config.mover().coordinatedByPostgres()) return Set.of(); // no tail runs beside it
        return new ChangedSlots(c.redis(), config.redis().keyspace().tail(), table.keyspace())
                .positions()
                .slots();
    }

    /** The row hash hashes the database's bytes; the Java side hashes UTF-8, so they agree only in a UTF8 database. */
    public static void requireUtf8(Connection pg) throws SQLException {
        try (Statement st = pg.createStatement();
                ResultSet rs = st.executeQuery("SHOW server_encoding")) {
            rs.next();
            String encoding = rs.getString(1);
            if (!encoding.equalsIgnoreCase("UTF8")) {
                throw new RebalanceException(
                        ErrorCode.SOURCE_KEY_TYPE,
                        "the source database's encoding is " + encoding + "; verify hashes text as UTF-8 and needs"
                                + " a UTF8 database (copy works with any encoding)");
            }
        }
    }

    /**
     * {@code verify.jdbcUrl}, when set, names a hot standby of the source: reachable, in recovery, and (where the role
     * may read it) of the same cluster as the source.
     *
     * @throws RebalanceException SOURCE_UNREACHABLE when it cannot be reached, CONFIG_INVALID when it is no standby of
     *     the source
     */
    public static void requireStandby(MigrationConfig config, Connection source) throws SQLException {
        String url = config.verify().jdbcUrl();
        if (url.isEmpty()) return;
        String shown = "verify.jdbcUrl=" + Redact.url(url);
        try (Connection standby = new SourceSession(config.verify().reads(config.source())).open()) {
            try (Statement st = standby.createStatement();
                    ResultSet rs = st.executeQuery("SELECT pg_is_in_recovery()")) {
                rs.next();
                if (!rs.getBoolean(1)) {
                    throw new RebalanceException(
                            ErrorCode.CONFIG_INVALID,
                            shown + " is not a hot standby (pg_is_in_recovery() is false): fingerprints are read"
                                    + " there only from a streaming replica of the source; point it at one, or leave"
                                    + " it empty to read the source");
                }
            }
            Optional<String> here = systemIdentifier(standby);
            Optional<String> there = systemIdentifier(source);
            if (here.isPresent() && there.isPresent() && !here.equals(there)) {
                throw new RebalanceException(
                        ErrorCode.CONFIG_INVALID,
                        shown + " is a standby of another cluster (system identifier " + here.get() + ", the source's "
                                + there.get() + "); point it at a streaming replica of the source");
            }
        } catch (SQLException e) {
            String state = e.getSQLState();
            if (state == null || state.startsWith("08") || state.startsWith("28")) { // connection, authentication
                throw new RebalanceException(
                        ErrorCode.SOURCE_UNREACHABLE,
                        shown + " cannot be reached ("
                                + String.valueOf(e.getMessage())
                                        .lines()
                                        .findFirst()
                                        .orElse("")
                                + "); start the standby or fix verify.jdbcUrl (REBALANCE_VERIFY_JDBC_URL), which"
                                + " uses source.user and its password",
                        e);
            }
            throw e;
        }
    }

    /** The cluster's system identifier, shared by a primary and its physical standbys; empty if the role may not read it. */
    private static Optional<String> systemIdentifier(Connection c) {
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT system_identifier::text FROM pg_control_system()")) {
            rs.next();
            return Optional.of(rs.getString(1));
        } catch (SQLException e) {
            return Optional.empty(); // pg_control_system() is for superusers unless granted
        }
    }

    /**
     * Slots of the run's plan the mover has not finished: a slot is finished when the watermark has passed it or its
     * state says so. Slots the watermark covers need no state; the others' states are read, then the watermark again,
     * since the keeper moves the watermark before it deletes states (ADR 3): a state found missing is covered by the
     * watermark read after it.
     */
    public static Set<String> stillCopying(Connections c, List<Slot> slots) {
        var run = c.runState();
        RunPlan plan = run.plan();
        if (plan == null || run.status() == RunStatus.FINISHED) return Set.of();
        SlotStore states = c.coordinator().slots();
        Slot before = run.watermark();
        List<Slot> unfinished = new ArrayList<>();
        for (Slot slot : slots) {
            if (!plan.range().contains(slot) || before != null && !slot.isOlderThan(before)) continue;
            if (!"FINISHED".equals(states.state(slot).get("status"))) unfinished.add(slot);
        }
        Slot after = unfinished.isEmpty() ? null : run.watermark();
        Set<String> out = new HashSet<>();
        for (Slot slot : unfinished) if (after == null || slot.isOlderThan(after)) out.add(slot.name());
        return out;
    }

    /**
     * While a tail runs, repairs are carried out by it, in order with the stream: written beside it, a repair that read
     * a row just before the tail applied a newer change could put the older row back for good.
     */
    public static Repairs throughTail(RepairQueue queue) {
        Duration bound = Duration.ofMinutes(2); // a repair waits behind at most the current batch
        return (source, ids) -> queue.submit(ids, bound)
                .orElseThrow(() -> new IllegalStateException("the running tail did not carry out the repair of "
                        + ids.size() + " ids within " + bound.toSeconds() + " s; check `rebalance status` (is it"
                        + " keeping up?) and verify again"));
    }
}
