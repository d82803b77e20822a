package io.rebalance.core.source;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * How the source table's copied columns differ from those a run was planned with: each column as {@code name type}
 * ({@link SourceTable#schema}). A rename shows as one column gone and one added: the catalog cannot tell them apart.
 */
public final class SchemaChange {
    private SchemaChange() {}

    /** @return what changed, one phrase per column, or empty when nothing did */
    public static Optional<String> between(List<String> planned, List<String> now) {
        Map<String, String> before = byName(planned);
        Map<String, String> after = byName(now);
        List<String> changes = new ArrayList<>();
        after.forEach((name, type) -> {
            if (!before.containsKey(name)) changes.add("column " + name + " (" + type + ") was added");
            else if (!before.get(name).equals(type))
                changes.add("column " + name + " changed type from " + before.get(name) + " to " + type);
        });
        before.forEach((name, type) -> {
            if (!after.containsKey(name)) changes.add("column " + name + " (" + type + ") was dropped or renamed");
        });
        return changes.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", changes));
    }

    private static Map<String, String> byName(List<String> columns) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String c : columns) {
            int space = c.lastIndexOf(' ');
            out.put(c.substring(0, space), c.substring(space + 1));
        }
        return out;
    }
}
