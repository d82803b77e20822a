package io.rebalance.cli;

import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Prints the part of {@code rebalance status} about the cutover, as {@link io.rebalance.ops.status.RoutingStatus} assembles it. */
final class RoutingLines {
    private RoutingLines() {}

    /** The scope's shadow reads: nothing until a sample is set or a read was compared. */
    static void shadows(PrintWriter out, Object shadow) {
        if (!(shadow instanceof Map<?, ?> m) || !(m.get("lastHour") instanceof Map<?, ?> hour)) return;
        long seen = 0;
        for (Object n : hour.values()) seen += ((Number) n).longValue();
        if (((Number) m.get("sample")).doubleValue() == 0 && seen == 0) return;
        out.println("  shadow     " + shadowSummary(m, ""));
    }

    /** {@code sample 0.1; last hour 3 matched, 1 mismatched, 0 errors, 0 skipped (75.00% match)}. */
    static String shadowSummary(Map<?, ?> m, String afterSample) {
        Map<?, ?> hour = (Map<?, ?>) m.get("lastHour");
        return String.format(
                Locale.ROOT,
                "sample %s%s; last hour %s matched, %s mismatched, %s errors, %s skipped%s",
                m.get("sample"),
                afterSample,
                hour.get("match"),
                hour.get("mismatch"),
                hour.get("error"),
                hour.get("skipped"),
                m.get("matchRate") instanceof Number r
                        ? String.format(Locale.ROOT, " (%.2f%% match)", 100 * r.doubleValue())
                        : "");
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
            if (s.get("writtenToDynamo") instanceof Map<?, ?> w) {
                out.printf(
                        "  written    %s keys to DynamoDB since the flip, logged for a rollback to compare%s%n",
                        w.get("keys"),
                        Boolean.TRUE.equals(w.get("complete"))
                                ? ""
                                : "; INCOMPLETE (" + w.get("incomplete") + "): a rollback compares every key of both"
                                        + " stores first, with writes flowing");
            }
            shadows(out, s.get("shadowReads"));
            if (!"".equals(s.get("exclusive"))) out.println("  exclusive  " + s.get("exclusive"));
            if (!"".equals(s.get("pending"))) out.println("  waiting    " + s.get("pending") + " (new writes wait)");
            out.printf("  writers    %s holding a shared lease%n", s.get("sharedHolders"));
            for (Object h : (List<Object>) s.get("shared")) out.println("    " + h);
            if (s.containsKey("lastCommand")) {
                out.printf(
                        "  last       %s %s at step %s%s%n",
                        s.get("lastCommand"),
                        s.get("lastCommandState"),
                        s.get("lastCommandStep"),
                        "".equals(s.get("lastCommandReason")) ? "" : " (" + s.get("lastCommandReason") + ")");
            }
            if (s.containsKey("next")) out.println("  next       " + s.get("next"));
            if (s.containsKey("forwardHold") && !"NONE".equals(s.get("forwardHold")))
                out.printf("  forward tail %s for this part%n", s.get("forwardHold"));
            bypassed(out, s.get("bypassedWrites"));
        }
        Map<String, Object> r = (Map<String, Object>) v.get("reverseStream");
        if (r != null && !r.isEmpty()) {
            out.printf(
                    "  reverse    %s, lag %s ms, %s applied, %s skipped, reported %s ms ago%s%s%n",
                    r.get("state"),
                    r.get("lagMs"),
                    r.get("applied"),
                    r.get("skipped"),
                    r.get("reportedMsAgo"),
                    "".equals(r.get("gap")) ? "" : "; LOST RECORDS " + r.get("gap"),
                    "".equals(r.get("lastError")) ? "" : "; last error: " + r.get("lastError"));
        }
        if (!"NONE".equals(v.get("forwardHold"))) {
            out.printf("  forward tail %s at %s%n", v.get("forwardHold"), v.get("forwardHoldLsn"));
        }
        if (v.get("fenceTrigger") instanceof Map<?, ?> t) {
            switch (String.valueOf(t.get("state"))) {
                case "in place" ->
                    out.printf(
                            "  trigger    %s on %s: Postgres refuses every write there while its fence is closed%n",
                            t.get("trigger"), t.get("table"));
                case "ready" ->
                    out.printf(
                            "  trigger    %s on %s: enabled as the fence closes, when Postgres refuses every write"
                                    + " there%n",
                            t.get("trigger"), t.get("table"));
                case "none" -> {} // no fence yet: nothing to enforce
                default ->
                    out.printf(
                            "  trigger    %s on %s %s: %s; run `rebalance cutover --prepare` again%n",
                            t.get("trigger"),
                            t.get("table"),
                            String.valueOf(t.get("state")).toUpperCase(Locale.ROOT),
                            t.get("gaps"));
            }
        }
        bypassed(out, v.get("bypassedWrites"));
    }

    private static void bypassed(PrintWriter out, Object written) {
        if (written instanceof Map<?, ?> b
                && (((Number) b.get("keys")).longValue() > 0 || ((Number) b.get("overflow")).longValue() > 0)) {
            out.printf(
                    "  BYPASSED   %s key(s) written to Postgres past its fence while the tail was held%s, not in"
                            + " DynamoDB: %s; --close-window refuses until they agree, a rollback carries them over%n",
                    b.get("keys"),
                    ((Number) b.get("overflow")).longValue() > 0
                            ? " (and " + b.get("overflow") + " more not kept)"
                            : "",
                    b.get("named"));
        }
    }
}
