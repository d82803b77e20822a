package io.rebalance.core.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/config.md, the built-in defaults and the configuration's records name the same keys, and the docs give each
 * key the default the code has: a key added to the defaults only, or a default changed in one place, fails here.
 */
class ConfigDocsTest {
    private static final Path DOC = Path.of("").toAbsolutePath().getParent().resolve("docs/config.md");
    /** A table row: {@code | `key` | default | meaning |}. */
    private static final Pattern ROW = Pattern.compile("^\\| `([a-zA-Z]+\\.[a-zA-Z.]+)` \\| (.*?) \\| .*\\|$");

    /** Every key docs/config.md documents, with its default as written there. */
    static Map<String, String> documented(String markdown) {
        Map<String, String> keys = new LinkedHashMap<>();
        for (String line : markdown.lines().toList()) {
            Matcher m = ROW.matcher(line);
            if (m.matches()) keys.put(m.group(1), plain(m.group(2)));
        }
        return keys;
    }

    /** The docs write an empty default as {@code empty}, {@code ""} or {@code []}, and a list's items in brackets. */
    private static String plain(String cell) {
        String v = cell.trim();
        if (v.equals("empty")) return "";
        if (v.startsWith("`") && v.endsWith("`") && v.length() >= 2) v = v.substring(1, v.length() - 1);
        if (v.equals("\"\"") || v.equals("[]")) return "";
        if (v.startsWith("[") && v.endsWith("]"))
            v = v.substring(1, v.length() - 1).replace(", ", ",");
        return v;
    }

    @Test
    void theDocsNameEveryKeyWithItsDefault() throws Exception {
        Map<String, String> docs = documented(Files.readString(DOC));
        assertThat(docs.keySet())
                .as("keys in docs/config.md and in defaults.yaml")
                .containsExactlyInAnyOrderElementsOf(ConfigLoader.keys());
        for (String key : ConfigLoader.keys()) {
            assertThat(docs.get(key))
                    .as("the default of %s in docs/config.md", key)
                    .isEqualTo(ConfigLoader.defaultValue(key));
        }
    }

    @Test
    void everyFieldOfTheConfigurationHasAKeyInTheDefaults() {
        List<String> fields = new ArrayList<>();
        walk(MigrationConfig.class, "", fields);
        assertThat(fields).containsExactlyInAnyOrderElementsOf(ConfigLoader.keys());
    }

    private static void walk(Class<?> type, String path, List<String> out) {
        for (RecordComponent c : type.getRecordComponents()) {
            String key = path.isEmpty() ? c.getName() : path + "." + c.getName();
            if (c.getType().isRecord()) walk(c.getType(), key, out);
            else out.add(key);
        }
    }
}
