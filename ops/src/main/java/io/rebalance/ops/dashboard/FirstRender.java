package io.rebalance.ops.dashboard;

import java.time.Instant;
import java.util.Locale;
import java.util.Map;

/**
 * The page as served, with the run's headline already in it: the tables, the status, when it was read and the copy's
 * figures. The script redraws everything from {@code /api/state} two seconds later; without it, this is the page.
 */
final class FirstRender {
    private FirstRender() {}

    /** @param state the run's state as {@code /api/state} has it, or null when the state store does not answer */
    @SuppressWarnings("unchecked")
    static String fill(String page, Map<String, Object> state) {
        if (state == null) {
            return page.replace(
                    "<span id=\"status\" class=\"badge\">loading</span>",
                    "<span id=\"status\" class=\"badge\">the run's state store does not answer</span>");
        }
        String status = String.valueOf(state.get("status"));
        Map<String, Object> rows = (Map<String, Object>) state.getOrDefault("rows", Map.of());
        Map<String, Object> slots = (Map<String, Object>) state.getOrDefault("slots", Map.of());
        String copy = pair("rows copied", number(rows.get("copied")) + " of ~" + number(rows.get("estimatedTotal")))
                + pair("rows/s", number(rows.get("perSecond")))
                + pair(
                        "slots",
                        number(slots.get("finished")) + " finished, " + number(slots.get("inProgress")) + " copying, "
                                + number(slots.get("left")) + " waiting of " + number(slots.get("total")));
        return page.replace(
                        "<span id=\"tables\"></span>",
                        "<span id=\"tables\">" + html(state.get("sourceTable") + " \u2192 " + state.get("targetTable"))
                                + "</span>")
                .replace(
                        "<span id=\"status\" class=\"badge\">loading</span>",
                        "<span id=\"status\" class=\"badge " + html(status) + "\">" + html(status) + "</span>")
                .replace(
                        "<span id=\"updated\" class=\"muted\"></span>",
                        "<span id=\"updated\" class=\"muted\">updated "
                                + Instant.ofEpochMilli(((Number) state.get("generatedMs")).longValue()) + "</span>")
                .replace("<dl id=\"copy\"></dl>", "<dl id=\"copy\">" + copy + "</dl>");
    }

    private static String pair(String name, String value) {
        return "<dt>" + html(name) + "</dt><dd>" + html(value) + "</dd>";
    }

    private static String number(Object n) {
        return n instanceof Number v ? String.format(Locale.ROOT, "%,d", v.longValue()) : "-";
    }

    /** Text as HTML shows it: a table's name or a status can hold nothing that is markup. */
    static String html(String text) {
        return text.replace("&", "&amp;")
                .replace("<", "&lt;")
                .replace(">", "&gt;")
                .replace("\"", "&quot;");
    }
}
