package io.rebalance.core.config;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Builds a {@link MigrationConfig} from four layers, later ones winning: the built-in defaults, a YAML file,
 * environment variables ({@code REBALANCE_SOURCE_JDBC_URL} for {@code source.jdbcUrl}), and explicit
 * {@code key=value} overrides from flags. Unknown keys are errors (a typo must not silently mean "default"),
 * and every error names the key, the value and the accepted form. Validation of meaning is
 * {@link ConfigValidator}'s job; this class only guarantees shape.
 */
public final class ConfigLoader {
    private static final ObjectMapper YAML = ConfigTypes.on(new ObjectMapper(new YAMLFactory())
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES));

    /** Environment variables of the tool itself, not config keys. */
    private static final List<String> OWN_VARIABLES =
            List.of("REBALANCE_CONFIG", "REBALANCE_LOG_LEVEL", "REBALANCE_JAVA_OPTS");

    /** Keys renamed, old spelling first: still read into the new key (a one-column list), each use warned of. */
    private static final Map<String, String> RENAMED = Map.of("source.keyColumn", "source.keyColumns");

    private final Map<String, String> env;
    private final List<String> warnings = new ArrayList<>();

    public ConfigLoader(Map<String, String> env) {
        this.env = env;
    }

    /** What the last {@link #load} ignored but a person should hear of: mistyped {@code REBALANCE_*} variables. */
    public List<String> warnings() {
        return List.copyOf(warnings);
    }

    public static ConfigLoader fromSystem() {
        return new ConfigLoader(System.getenv());
    }

    /**
     * @param file YAML file, or null for defaults only
     * @param overrides {@code dotted.key -> value}, applied last; may be empty, never null
     */
    public MigrationConfig load(Path file, Map<String, String> overrides) {
        warnings.clear();
        ObjectNode tree = defaults();
        Map<String, String> origins = new LinkedHashMap<>(); // dotted key -> where its value was set
        // every problem at once, not one per run: unknown keys are left out, values of the wrong type set back to
        // their defaults, and what the rest means is validated too
        List<String> wrong = new ArrayList<>();
        if (file != null) {
            Map<String, String> lines = YamlLocations.of(file, YAML);
            lines.forEach((k, where) -> origins.put(k, file + " " + where));
            JsonNode read = readFile(file);
            RENAMED.forEach((old, now) -> renameIn(read, old, now, file.toString(), wrong));
            merge(tree, read, "", origins, wrong);
        }
        List<String> keys = leafKeys(tree, "");
        for (String key : keys) {
            String value = env.get(envName(key));
            if (value != null) {
                set(tree, key, value, "environment variable " + envName(key));
                origins.put(key, "environment variable " + envName(key));
            }
        }
        RENAMED.forEach((old, now) -> {
            String value = env.get(envName(old));
            if (value == null) return;
            if (env.get(envName(now)) != null) {
                wrong.add(envName(old) + " and " + envName(now) + " are both set; keep " + envName(now));
                return;
            }
            set(tree, now, value, "environment variable " + envName(old));
            warnings.add(renamed(old, now, "environment variable " + envName(old)));
        });
        warnUnknownVariables(keys);
        overrides.forEach((given, v) -> {
            String k = RENAMED.getOrDefault(given, given);
            if (!k.equals(given)) warnings.add(renamed(given, k, "--set " + given));
            try {
                set(tree, k, v, "override " + given + "=" + v);
                origins.put(k, "--set " + k);
            } catch (RebalanceException unknown) {
                wrong.add(unknown.getMessage());
            }
        });
        // each value of the wrong type is set back to its default and the binding tried again
        JsonProcessingException first = null;
        ObjectNode fallback = defaults();
        List<String> named = new ArrayList<>();
        for (int attempt = 0; attempt < 50; attempt++) {
            try {
                MigrationConfig config = YAML.treeToValue(tree, MigrationConfig.class);
                if (wrong.isEmpty()) return config;
                // what the values that did bind mean; a key already named (set back to its default) is not named twice
                ConfigValidator.problems(config).stream()
                        .filter(p -> named.stream().noneMatch(k -> p.startsWith(k + "=") || p.startsWith(k + " ")))
                        .forEach(wrong::add);
                break;
            } catch (JsonProcessingException e) {
                if (first == null) first = e;
                String key = BindingProblem.keyOf(e);
                String where = origins.getOrDefault(key, origins.get(BindingProblem.settingOf(key)));
                String origin = where != null ? " (set in " + where + ")" : "";
                wrong.add(BindingProblem.describe(e, at(tree, key)) + origin);
                named.add(BindingProblem.settingOf(key));
                // a value inside a list (an entry of cutover.parts) sets the whole list back
                if (!(e instanceof MismatchedInputException) || !reset(tree, fallback, BindingProblem.settingOf(key)))
                    break;
            }
        }
        String message = wrong.size() == 1
                ? wrong.get(0)
                : wrong.size() + " config keys are invalid:\n  " + String.join("\n  ", wrong);
        throw new RebalanceException(ErrorCode.CONFIG_INVALID, message, first);
    }

    /** The node at a dotted key, or null. */
    private static JsonNode at(ObjectNode tree, String key) {
        JsonNode node = tree;
        for (String part : key.replace("[", ".[").split("\\.")) {
            if (node == null || part.isEmpty()) continue;
            node = part.startsWith("[")
                    ? node.get(Integer.parseInt(part.substring(1, part.length() - 1)))
                    : node.get(part);
        }
        return node;
    }

    /** Sets {@code key} in {@code tree} back to its value in {@code defaults}. @return whether it could */
    private static boolean reset(ObjectNode tree, ObjectNode defaults, String key) {
        String[] parts = key.split("\\.");
        JsonNode parent = at(tree, String.join(".", Arrays.copyOf(parts, parts.length - 1)));
        JsonNode value = at(defaults, key);
        if (parts.length < 2 || !(parent instanceof ObjectNode p) || value == null) return false;
        p.set(parts[parts.length - 1], value.deepCopy());
        return true;
    }

    /** Moves an old key's value in a file to its new key, a list of it; both given is a problem. */
    private void renameIn(JsonNode file, String old, String now, String where, List<String> wrong) {
        String section = old.substring(0, old.indexOf('.'));
        String oldLeaf = old.substring(section.length() + 1);
        if (!(file.get(section) instanceof ObjectNode node) || !node.has(oldLeaf)) return;
        JsonNode value = node.remove(oldLeaf);
        String nowLeaf = now.substring(section.length() + 1);
        if (node.has(nowLeaf)) {
            wrong.add("in " + where + ": " + old + " and " + now + " are both set; keep " + now);
            return;
        }
        ArrayNode list = node.putArray(nowLeaf);
        if (!value.asText().isBlank()) list.add(value.asText());
        warnings.add(renamed(old, now, where));
    }

    private static String renamed(String old, String now, String where) {
        return old + " (in " + where + ") is deprecated and read as " + now + "; write " + now
                + " instead, a list of the key's columns";
    }

    private void warnUnknownVariables(List<String> keys) {
        List<String> known = Stream.concat(keys.stream(), RENAMED.keySet().stream())
                .map(ConfigLoader::envName)
                .toList();
        env.keySet().stream()
                .filter(v -> v.startsWith("REBALANCE_") && !known.contains(v) && !OWN_VARIABLES.contains(v))
                .filter(v -> !v.startsWith("REBALANCE_TEST_")) // the test suite's own settings
                .sorted()
                .forEach(v -> {
                    String near = known.stream()
                            .filter(k -> editDistance(k, v) <= 3)
                            .min((a, b) -> editDistance(a, v) - editDistance(b, v))
                            .orElse(null);
                    warnings.add("environment variable " + v + " is not a rebalance setting and is ignored; "
                            + (near != null
                                    ? "did you mean " + near + "?"
                                    : "`rebalance config --env` lists the variables"));
                });
    }

    /** The environment variable that overrides a dotted key: {@code mover.leaseTtl -> REBALANCE_MOVER_LEASE_TTL}. */
    public static String envName(String key) {
        return "REBALANCE_"
                + key.replaceAll("([a-z0-9])([A-Z])", "$1_$2").replace('.', '_').toUpperCase(Locale.ROOT);
    }

    /** The built-in default of a dotted key as the defaults file writes it (a list's items comma-separated). */
    public static String defaultValue(String key) {
        JsonNode node = defaults();
        for (String part : key.split("\\.")) {
            node = node.get(part);
            if (node == null) throw unknownKey(key);
        }
        if (node.isArray()) {
            List<String> items = new ArrayList<>();
            node.forEach(i -> items.add(i.asText()));
            return String.join(",", items);
        }
        return node.asText();
    }

    /** All dotted keys the configuration has, in document order. */
    public static List<String> keys() {
        return leafKeys(defaults(), "");
    }

    private static ObjectNode defaults() {
        try (InputStream in = ConfigLoader.class.getResourceAsStream("defaults.yaml")) {
            return (ObjectNode) YAML.readTree(in);
        } catch (IOException e) {
            throw new IllegalStateException("built-in defaults.yaml is unreadable", e);
        }
    }

    private static JsonNode readFile(Path file) {
        if (!Files.isRegularFile(file)) {
            throw new RebalanceException(
                    ErrorCode.CONFIG_INVALID,
                    "config file " + file + (Files.isDirectory(file) ? " is a directory" : " does not exist")
                            + "; pass an existing YAML file with --config"
                            + " (docs/config.md lists every key), or leave --config out to use the defaults");
        }
        try {
            JsonNode node = YAML.readTree(file.toFile());
            if (node == null || node.isMissingNode() || node.isNull()) return YAML.createObjectNode();
            if (!node.isObject()) {
                throw new RebalanceException(
                        ErrorCode.CONFIG_INVALID, "config file " + file + " must hold a YAML mapping at the top");
            }
            return node;
        } catch (IOException e) {
            throw new RebalanceException(
                    ErrorCode.CONFIG_INVALID, "config file " + file + " is not valid YAML" + YamlProblem.of(e), e);
        }
    }

    /** Merges {@code over} into {@code base}; a key {@code base} does not have is left out and named in {@code wrong}. */
    private static void merge(
            ObjectNode base, JsonNode over, String path, Map<String, String> origins, List<String> wrong) {
        Iterator<Map.Entry<String, JsonNode>> it = over.fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            String key = path.isEmpty() ? e.getKey() : path + "." + e.getKey();
            JsonNode current = base.get(e.getKey());
            if (current == null) {
                String unknown = unknownKey(key).getMessage();
                wrong.add(origins.containsKey(key) ? "in " + origins.get(key) + ": " + unknown : unknown);
                continue;
            }
            if (current.isObject() && e.getValue().isObject()) {
                merge((ObjectNode) current, e.getValue(), key, origins, wrong);
            } else {
                base.set(e.getKey(), e.getValue());
            }
        }
    }

    private static void set(ObjectNode tree, String key, String value, String origin) {
        String[] parts = key.split("\\.");
        ObjectNode node = tree;
        for (int i = 0; i < parts.length - 1; i++) {
            JsonNode child = node.get(parts[i]);
            if (!(child instanceof ObjectNode)) throw unknownKey(key);
            node = (ObjectNode) child;
        }
        JsonNode current = node.get(parts[parts.length - 1]);
        if (current == null || current.isObject()) throw unknownKey(key);
        if (current.isArray() && value.trim().startsWith("[")) {
            // a list in YAML's flow form, the one way to give a list of maps such as cutover.parts outside a file
            node.set(parts[parts.length - 1], flowList(key, value, origin));
        } else if (current.isArray()) {
            ArrayNode list = node.putArray(parts[parts.length - 1]);
            for (String item : value.split(",")) {
                if (!item.isBlank()) list.add(item.trim());
            }
        } else {
            // Text is fine for numbers too: Jackson coerces "8" to int and names the key if it is not a number.
            node.set(parts[parts.length - 1], TextNode.valueOf(value));
        }
    }

    private static JsonNode flowList(String key, String value, String origin) {
        try {
            JsonNode list = YAML.readTree(value);
            if (list != null && list.isArray()) return list;
        } catch (JsonProcessingException e) {
            // named below, with the form that works
        }
        throw new RebalanceException(
                ErrorCode.CONFIG_INVALID,
                "config key '" + key + "' in " + origin + " is not a list in YAML's flow form; write it like"
                        + " [{name: pilot, values: [42]}, {name: rest}] (quoted for the shell)");
    }

    private static List<String> leafKeys(JsonNode node, String path) {
        List<String> out = new ArrayList<>();
        Iterator<Map.Entry<String, JsonNode>> it = node.fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            String key = path.isEmpty() ? e.getKey() : path + "." + e.getKey();
            if (e.getValue().isObject()) out.addAll(leafKeys(e.getValue(), key));
            else out.add(key);
        }
        return out;
    }

    static RebalanceException unknownKey(String key) {
        return new RebalanceException(
                ErrorCode.CONFIG_INVALID,
                "unknown config key '" + key + "'; the keys are listed in docs/config.md (" + closest(key) + ")");
    }

    /** Keys whose last part is within two edits of the unknown one (typos), or contains it. */
    private static String closest(String key) {
        String leaf = key.substring(key.lastIndexOf('.') + 1).toLowerCase(Locale.ROOT);
        List<String> near = keys().stream()
                .filter(k -> {
                    String other = k.substring(k.lastIndexOf('.') + 1).toLowerCase(Locale.ROOT);
                    return editDistance(leaf, other) <= 2 || other.contains(leaf) || leaf.contains(other);
                })
                .collect(Collectors.toList());
        return near.isEmpty()
                ? "run `rebalance config` to print them"
                : "did you mean " + String.join(" or ", near) + "?";
    }

    /** Levenshtein distance: how many one-character edits turn {@code a} into {@code b}. */
    public static int editDistance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) prev[j] = j;
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int subst = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                cur[j] = Math.min(subst, Math.min(prev[j] + 1, cur[j - 1] + 1));
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }
}
