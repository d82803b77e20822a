package io.rebalance.core.config;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The effective configuration as {@code rebalance config} prints it: YAML or JSON, secrets masked. */
public final class ConfigPrinter {
    private static final ObjectMapper YAML = ConfigTypes.on(new ObjectMapper(new YAMLFactory()));

    private ConfigPrinter() {}

    /** For `rebalance config`: the effective configuration as YAML, secrets masked. */
    public static String toYaml(MigrationConfig config) {
        try {
            return YAML.writeValueAsString(masked(config));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** For `rebalance config --json`: the same, as one JSON object with the types of the keys. */
    public static String toJson(MigrationConfig config) {
        try {
            return new ObjectMapper().writerWithDefaultPrettyPrinter().writeValueAsString(masked(config));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Map<String, Object> masked(MigrationConfig config) {
        ObjectNode tree = YAML.valueToTree(config);
        ObjectNode source = (ObjectNode) tree.get("source");
        if (!source.get("password").asText().isEmpty()) source.put("password", "***");
        source.put("jdbcUrl", Redact.url(config.source().jdbcUrl()));
        ((ObjectNode) tree.get("verify"))
                .put("jdbcUrl", Redact.url(config.verify().jdbcUrl()));
        ((ObjectNode) tree.get("coordinator"))
                .put("jdbcUrl", Redact.url(config.coordinator().jdbcUrl()));
        ObjectNode target = (ObjectNode) tree.get("target");
        if (!target.get("secretAccessKey").asText().isEmpty()) target.put("secretAccessKey", "***");
        ObjectNode redis = (ObjectNode) tree.get("redis");
        redis.put("url", Redact.url(config.redis().url()));
        for (String secret : new String[] {"password", "sentinelPassword"}) {
            if (!redis.get(secret).asText().isEmpty()) redis.put(secret, "***");
        }
        // a part's entry shows only the fields it was given, as the docs write it
        tree.get("cutover").get("parts").forEach(part -> {
            List<String> unset = new ArrayList<>();
            part.fields().forEachRemaining(f -> {
                if (f.getValue().isNull()) unset.add(f.getKey());
            });
            ((ObjectNode) part).remove(unset);
        });
        Map<String, Object> ordered = new LinkedHashMap<>();
        tree.fields().forEachRemaining(e -> ordered.put(e.getKey(), e.getValue()));
        return ordered;
    }
}
