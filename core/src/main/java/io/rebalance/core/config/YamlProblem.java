package io.rebalance.core.config;

import com.fasterxml.jackson.core.JsonProcessingException;
import java.io.IOException;
import org.yaml.snakeyaml.error.MarkedYAMLException;

/** What a config file's YAML parser refused, as a user reads it: where, and what. */
final class YamlProblem {
    private YamlProblem() {}

    /**
     * Where the YAML parser found the problem, and what it was. The parser's own mark is taken over Jackson's location
     * (the end of the last event that parsed, often the line before), and a tab named as one: YAML refuses tabs as
     * indentation, and nothing on the screen shows them.
     */
    static String of(IOException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof MarkedYAMLException m && m.getProblemMark() != null) {
                String problem = m.getProblem() == null ? m.getContext() : m.getProblem();
                if (problem != null && (problem.contains("(TAB)") || problem.indexOf('\t') >= 0)) {
                    problem = "a tab, and YAML indents with spaces only; replace the tab with spaces";
                }
                return " at line " + (m.getProblemMark().getLine() + 1) + ", column "
                        + (m.getProblemMark().getColumn() + 1) + ": " + problem;
            }
        }
        String where = e instanceof JsonProcessingException j && j.getLocation() != null
                ? " at line " + j.getLocation().getLineNr() + ", column "
                        + j.getLocation().getColumnNr()
                : "";
        String why = e instanceof JsonProcessingException j ? j.getOriginalMessage() : e.getMessage();
        return where + ": " + why.lines().findFirst().orElse("");
    }
}
