package io.rebalance.ops.status;

import io.rebalance.cutover.CutoverJournal;
import io.rebalance.ops.ShadowReport;
import io.rebalance.protocol.handoff.BypassedWrites;
import io.rebalance.protocol.handoff.ForwardHold;
import io.rebalance.protocol.handoff.Lsn;
import io.rebalance.protocol.handoff.ReverseStatus;
import io.rebalance.protocol.handoff.TargetWriteLog;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.lock.LockHolders;
import io.rebalance.protocol.lock.SharedExclusiveLock;
import io.rebalance.protocol.part.PartMap;
import io.rebalance.protocol.route.Route;
import io.rebalance.protocol.route.RouteStatus;
import io.rebalance.protocol.route.RoutingTable;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import redis.clients.jedis.UnifiedJedis;

/** The part of {@code rebalance status} about the cutover: each scope's route and who holds or waits for its lock. */
public final class RoutingStatus {
    /** Shared holders listed by name; past this, only counted. */
    private static final int LISTED = 10;

    private RoutingStatus() {}

    /** No route, no hold, no reverse stream: what a run without Redis has (no cutover runs without it). */
    public static Map<String, Object> none() {
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("scopes", List.of());
        v.put("forwardHold", ForwardHold.Phase.NONE.name());
        v.put("reverseStream", Map.of());
        v.put("bypassedWrites", bypassed(0, new BypassedWrites.Summary(Map.of(), 0)));
        return v;
    }

    public static Map<String, Object> of(UnifiedJedis redis, Keyspace keyspace) {
        RoutingTable table = new RoutingTable(redis, keyspace);
        ShadowReport shadows = new ShadowReport(redis, keyspace);
        List<Map<String, Object>> scopes = new ArrayList<>();
        for (String scope : table.scopes()) {
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("scope", scope);
            table.get(scope).ifPresent(r -> {
                s.putAll(route(r));
                s.put("shadowReads", shadows.summary(r));
                if (r.status() == RouteStatus.TARGET) {
                    TargetWriteLog.Summary w = new TargetWriteLog(redis, keyspace.scope(scope)).summary(r.epoch());
                    Map<String, Object> written = new LinkedHashMap<>();
                    written.put("keys", w.keys());
                    written.put("complete", w.incomplete().isEmpty());
                    written.put("incomplete", w.incomplete());
                    s.put("writtenToDynamo", written);
                }
            });
            LockHolders h = new SharedExclusiveLock(redis, keyspace.scope(scope)).holders();
            s.put("exclusive", h.exclusive() == null ? "" : exclusive(h.exclusive()));
            s.put("pending", h.pending() == null ? "" : exclusive(h.pending()));
            s.put("sharedHolders", h.shared().size());
            s.put(
                    "shared",
                    h.shared().stream()
                            .limit(LISTED)
                            .map(x -> x.member() + " (" + x.remainingMs() + " ms left)")
                            .toList());
            s.putAll(journal(new CutoverJournal(redis, keyspace.scope(scope)), h, scope));
            String name = PartMap.partOfScope(scope);
            if (name != null) { // a part (ADR 20): its own forward hold and writes that bypassed its fence
                var part = keyspace.handoff().part(name);
                s.put(
                        "forwardHold",
                        new ForwardHold(redis, part).state().phase().name());
                BypassedWrites b = new BypassedWrites(redis, part);
                s.put("bypassedWrites", bypassed(b.kept(), b.summary(LISTED)));
            }
            scopes.add(s);
        }
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("scopes", scopes);
        ForwardHold.State hold = new ForwardHold(redis, keyspace.handoff()).state();
        v.put("forwardHold", hold.phase().name());
        if (hold.request() != null)
            v.put("forwardHoldLsn", Lsn.text(hold.request().lsn()));
        Map<String, Object> r = new LinkedHashMap<>();
        new ReverseStatus(redis, keyspace.handoff()).read().ifPresent(reverse -> {
            r.put("state", reverse.state());
            r.put("lagMs", reverse.lagMs());
            r.put("reportedMsAgo", System.currentTimeMillis() - reverse.updatedMs());
            r.put("applied", reverse.applied());
            r.put("skipped", reverse.skipped());
            r.put("gap", reverse.gap());
            r.put("lastError", reverse.lastError());
        });
        v.put("reverseStream", r);
        BypassedWrites bypassed = new BypassedWrites(redis, keyspace.handoff());
        v.put("bypassedWrites", bypassed(bypassed.kept(), bypassed.summary(LISTED)));
        return v;
    }

    /** Writes that bypassed the Postgres fence while the tail was held, not reconciled yet: counted, a few named. */
    private static Map<String, Object> bypassed(long kept, BypassedWrites.Summary found) {
        Map<String, Object> b = new LinkedHashMap<>();
        b.put("keys", kept);
        b.put("overflow", found.overflow());
        b.put("named", found.keys().keySet().stream().sorted().limit(LISTED).toList());
        return b;
    }

    /** The last cutover command, and what to run next when it stopped mid-way. */
    private static Map<String, Object> journal(CutoverJournal journal, LockHolders h, String scope) {
        String part = PartMap.partOfScope(scope);
        String recover = "rebalance cutover --recover" + (part == null ? "" : " --part " + part);
        Map<String, Object> m = new LinkedHashMap<>();
        journal.read().ifPresent(e -> {
            boolean alive = (h.exclusive() != null && h.exclusive().owner().equals(e.owner()))
                    || (h.pending() != null && h.pending().owner().equals(e.owner()));
            String state = e.running() && !alive ? "interrupted" : e.status();
            m.put("lastCommand", e.op());
            m.put("lastCommandState", state);
            m.put("lastCommandStep", e.step());
            m.put("lastCommandBlockedMs", e.blockedMs());
            m.put("lastCommandReason", e.reason());
            if (state.equals("interrupted") || state.equals("failed")) {
                m.put(
                        "next",
                        "run `" + recover + "`: the " + e.op() + " stopped at step " + e.step()
                                + "; recovery brings the fences and the tail in line with the route, which was never half-set");
            }
        });
        return m;
    }

    private static Map<String, Object> route(Route r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("status", r.status().name());
        m.put("read", r.read().wire());
        m.put("write", r.write().wire());
        m.put("epoch", r.epoch());
        m.put("token", r.token());
        m.put("updated", Instant.ofEpochMilli(r.updatedMs()).toString());
        return m;
    }

    private static String exclusive(LockHolders.Exclusive e) {
        return e.owner() + (e.token() == 0 ? "" : " token " + e.token()) + ", for " + e.heldMs() + " ms, "
                + e.remainingMs() + " ms left";
    }
}
