package io.rebalance.cli;

import io.rebalance.core.handoff.ForwardHold;
import io.rebalance.core.handoff.HandoffKeys;
import io.rebalance.core.lock.LockHolders;
import io.rebalance.core.lock.ScopeKeys;
import io.rebalance.core.lock.SharedExclusiveLock;
import io.rebalance.core.route.Route;
import io.rebalance.core.route.RoutingTable;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import redis.clients.jedis.UnifiedJedis;

/** The part of {@code rebalance status} about the cutover: each scope's route and who holds or waits for its lock. */
final class RoutingView {
    /** Shared holders listed by name; past this, only counted. */
    private static final int LISTED = 10;

    private RoutingView() {}

    static Map<String, Object> of(UnifiedJedis redis, String prefix) {
        RoutingTable table = new RoutingTable(redis, prefix);
        List<Map<String, Object>> scopes = new ArrayList<>();
        for (String scope : table.scopes()) {
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("scope", scope);
            table.get(scope).ifPresent(r -> s.putAll(route(r)));
            LockHolders h = new SharedExclusiveLock(redis, new ScopeKeys(prefix, scope)).holders();
            s.put("exclusive", h.exclusive() == null ? "" : exclusive(h.exclusive()));
            s.put("pending", h.pending() == null ? "" : exclusive(h.pending()));
            s.put("sharedHolders", h.shared().size());
            s.put(
                    "shared",
                    h.shared().stream()
                            .limit(LISTED)
                            .map(x -> x.member() + " (" + x.remainingMs() + " ms left)")
                            .toList());
            scopes.add(s);
        }
        Map<String, Object> v = new LinkedHashMap<>();
        v.put("scopes", scopes);
        ForwardHold.State hold = new ForwardHold(redis, new HandoffKeys(prefix)).state();
        v.put("forwardHold", hold.phase().name());
        if (hold.request() != null)
            v.put(
                    "forwardHoldLsn",
                    io.rebalance.core.handoff.Lsn.text(hold.request().lsn()));
        return v;
    }

    private static Map<String, Object> route(Route r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("status", r.status().name());
        m.put("read", r.read().wire());
        m.put("write", r.write().wire());
        m.put("epoch", r.epoch());
        m.put("token", r.token());
        m.put("updated", java.time.Instant.ofEpochMilli(r.updatedMs()).toString());
        return m;
    }

    private static String exclusive(LockHolders.Exclusive e) {
        return e.owner() + (e.token() == 0 ? "" : " token " + e.token()) + ", for " + e.heldMs() + " ms, "
                + e.remainingMs() + " ms left";
    }

    @SuppressWarnings("unchecked")
    static void print(Map<String, Object> v, PrintWriter out) {
        List<Map<String, Object>> scopes = (List<Map<String, Object>>) v.get("scopes");
        if (scopes.isEmpty()) {
            out.println("routing    no scope prepared for cutover");
            return;
        }
        for (Map<String, Object> s : scopes) {
            out.printf(
                    "routing    %s: %s, read %s, write %s (epoch %s, set by token %s at %s)%n",
                    s.get("scope"),
                    s.get("status"),
                    s.get("read"),
                    s.get("write"),
                    s.get("epoch"),
                    s.get("token"),
                    s.get("updated"));
            if (!"".equals(s.get("exclusive"))) out.println("  exclusive  " + s.get("exclusive"));
            if (!"".equals(s.get("pending"))) out.println("  waiting    " + s.get("pending") + " (new writes wait)");
            out.printf("  writers    %s holding a shared lease%n", s.get("sharedHolders"));
            for (Object h : (List<Object>) s.get("shared")) out.println("    " + h);
        }
        if (!"NONE".equals(v.get("forwardHold"))) {
            out.printf("  forward tail %s at %s%n", v.get("forwardHold"), v.get("forwardHoldLsn"));
        }
    }
}
