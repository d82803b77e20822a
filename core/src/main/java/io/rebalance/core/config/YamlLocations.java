package io.rebalance.core.config;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Where each key of a YAML file is written, so an error in its value can name the line a person must fix. */
final class YamlLocations {
    private YamlLocations() {}

    /** @return dotted key -> "line L, column C"; empty when the file cannot be parsed (its reader says why) */
    static Map<String, String> of(Path file, ObjectMapper yaml) {
        Map<String, String> out = new LinkedHashMap<>();
        List<String> path = new ArrayList<>(); // the field names of the mappings the parser is inside
        String field = null;
        try (JsonParser p = yaml.getFactory().createParser(file.toFile())) {
            for (JsonToken t = p.nextToken(); t != null; t = p.nextToken()) {
                switch (t) {
                    case FIELD_NAME -> {
                        field = p.currentName();
                        String key = path.isEmpty() ? field : String.join(".", path) + "." + field;
                        var at = p.currentTokenLocation();
                        out.put(key, "line " + at.getLineNr() + ", column " + at.getColumnNr());
                    }
                    case START_OBJECT -> {
                        if (field != null) path.add(field);
                        field = null;
                    }
                    case END_OBJECT -> {
                        if (!path.isEmpty()) path.remove(path.size() - 1);
                    }
                    case START_ARRAY -> p.skipChildren();
                    default -> {}
                }
            }
        } catch (IOException e) {
            return Map.of();
        }
        return out;
    }
}
