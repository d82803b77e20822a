package io.rebalance.ops.dashboard;

import io.rebalance.cutover.CutoverJournal;
import io.rebalance.cutover.CutoverStep;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The last cutover command of a scope as its journal tells it: the command, how it ended, how long writes were
 * blocked, and each step with how long it took (from one step's line to the next; the last step of a command still
 * running counts up to now).
 */
final class CutoverSteps {
    private static final int LINES = 200;

    private CutoverSteps() {}

    static Map<String, Object> read(CutoverJournal journal, long nowMs) {
        Map<String, Object> v = new LinkedHashMap<>();
        Optional<CutoverJournal.Entry> entry = journal.read();
        if (entry.isEmpty()) return v;
        CutoverJournal.Entry e = entry.get();
        v.put("op", e.op());
        v.put("status", e.status());
        v.put("startedMs", e.startedMs());
        v.put("blockedMs", e.blockedMs());
        v.put("reason", e.reason());
        v.put("steps", steps(journal.tail(LINES), e.op(), e.running() ? nowMs : e.updatedMs()));
        return v;
    }

    /** The steps of the last command {@code op} began, from lines "epochMs op STEP detail". */
    static List<Map<String, Object>> steps(List<String> lines, String op, long endMs) {
        int begun = -1;
        for (int i = 0; i < lines.size(); i++) {
            String[] w = lines.get(i).split(" ", 4);
            if (w.length >= 3 && w[1].equals(op) && w[2].equals("begun")) begun = i;
        }
        List<Map<String, Object>> out = new ArrayList<>();
        if (begun < 0) return out;
        long previousStart = -1;
        Map<String, Object> previous = null;
        for (int i = begun + 1; i < lines.size(); i++) {
            String[] w = lines.get(i).split(" ", 4);
            if (w.length < 3 || !w[1].equals(op)) continue;
            long at;
            try {
                at = Long.parseLong(w[0]);
            } catch (NumberFormatException notTimed) {
                continue;
            }
            if (previous != null) previous.put("ms", Math.max(0, at - previousStart));
            previous = null;
            if (!isStep(w[2])) continue;
            previous = new LinkedHashMap<>();
            previous.put("step", w[2]);
            previous.put("ms", 0L);
            previousStart = at;
            out.add(previous);
        }
        if (previous != null) previous.put("ms", Math.max(0, endMs - previousStart));
        return out;
    }

    private static boolean isStep(String word) {
        for (CutoverStep s : CutoverStep.values()) if (s.name().equals(word)) return true;
        return false;
    }
}
