package io.rebalance.core.config;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Locale;

/** A value the configuration's types could not take, in the words of the configuration, never Jackson's. */
final class BindingProblem {
    private BindingProblem() {}

    static String keyOf(JsonProcessingException e) {
        if (!(e instanceof MismatchedInputException mi)) return "?";
        StringBuilder key = new StringBuilder();
        for (var r : mi.getPath()) {
            if (r.getFieldName() != null)
                key.append(key.length() == 0 ? "" : ".").append(r.getFieldName());
            else key.append('[').append(r.getIndex()).append(']');
        }
        return key.toString();
    }

    /** The key a value inside a list belongs to: {@code cutover.parts} for {@code cutover.parts[1].values}. */
    static String settingOf(String key) {
        int i = key.indexOf('[');
        return i < 0 ? key : key.substring(0, i);
    }

    /** What is wrong with a key's value, in the words of the configuration, never Jackson's. */
    static String describe(JsonProcessingException e, JsonNode value) {
        String key = keyOf(e);
        if (e instanceof UnrecognizedPropertyException u && !key.equals(settingOf(key))) {
            return "unknown key '" + key + "' in an entry of " + settingOf(key) + "; an entry has "
                    + String.join(
                            ", ",
                            u.getKnownPropertyIds().stream()
                                    .map(String::valueOf)
                                    .sorted()
                                    .toList())
                    + " (docs/config.md)";
        }
        if (e instanceof UnrecognizedPropertyException)
            return ConfigLoader.unknownKey(key).getMessage();
        String fix = "; fix it in the YAML file, in " + ConfigLoader.envName(settingOf(key))
                + ", or in the flag that set it";
        if (e instanceof InvalidFormatException ife && ife.getTargetType().isEnum()) {
            return key + "='" + ife.getValue() + "' is not valid; expected one of "
                    + String.join(", ", choices(ife.getTargetType())) + fix;
        }
        if (e instanceof InvalidFormatException ife && ife.getTargetType() == Duration.class) {
            return key + ": " + ife.getOriginalMessage() + fix;
        }
        if (e instanceof InvalidFormatException ife) {
            return "config key '" + key + "' has value '" + ife.getValue() + "', which is not a "
                    + typeName(ife.getTargetType()) + fix;
        }
        if (e instanceof MismatchedInputException mi && mi.getTargetType() != null && value != null) {
            String found = value.isArray() ? "a list" : value.isObject() ? "a map of keys" : "'" + value.asText() + "'";
            return "config key '" + key + "' is " + found + " (" + value + ") where "
                    + (Collection.class.isAssignableFrom(mi.getTargetType())
                            ? "a list"
                            : "one " + typeName(mi.getTargetType()))
                    + " belongs" + fix;
        }
        return "config key '" + key + "' is not valid (" + (value == null ? "no value" : value.toString()) + ")" + fix;
    }

    /** The texts an enum of the configuration is written as, sorted. */
    private static List<String> choices(Class<?> type) {
        return Arrays.stream(type.getEnumConstants())
                .map(c -> c.toString().toLowerCase(Locale.ROOT))
                .sorted()
                .toList();
    }

    private static String typeName(Class<?> type) {
        if (type == String.class) return "text value";
        if (type == int.class || type == long.class || type == Integer.class || type == Long.class)
            return "whole number";
        if (type == boolean.class || type == Boolean.class) return "true or false";
        if (type == double.class || type == Double.class) return "number";
        return type.getSimpleName().toLowerCase(Locale.ROOT);
    }
}
