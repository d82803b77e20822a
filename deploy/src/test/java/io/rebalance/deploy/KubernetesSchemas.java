package io.rebalance.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.gson.JsonElement;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import io.fabric8.openshift.api.model.monitoring.v1.PodMonitor;
import io.fabric8.openshift.api.model.monitoring.v1.PrometheusRule;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Checks one Kubernetes object against the API's schemas. Built-in kinds go through the official Java client's
 * models, generated from the API's OpenAPI document: each refuses a field its type does not have, a value of the
 * wrong type and a missing required field, at every depth. The Prometheus Operator's kinds go through fabric8's
 * models of them: a field they do not have lands in a model's additional properties, which are reported.
 */
final class KubernetesSchemas {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final io.kubernetes.client.openapi.JSON CLIENT_JSON = new io.kubernetes.client.openapi.JSON();
    /** The API groups whose kinds the official models cover here ("" is the core group). */
    private static final Set<String> BUILT_IN = Set.of("", "apps", "batch", "policy", "rbac.authorization.k8s.io");

    private static final Map<String, Class<?>> MONITORING =
            Map.of("PodMonitor", PodMonitor.class, "PrometheusRule", PrometheusRule.class);

    private KubernetesSchemas() {}

    /** @return what is wrong with {@code object}, one line each, each naming its kind and name; empty when valid */
    static List<String> problems(JsonNode object) {
        String apiVersion = object.path("apiVersion").asText();
        String kind = object.path("kind").asText();
        String name = kind + " " + object.path("metadata").path("name").asText("(no name)");
        if (apiVersion.isEmpty() || kind.isEmpty()) return List.of(name + ": apiVersion and kind are required");
        String group = apiVersion.contains("/") ? apiVersion.substring(0, apiVersion.indexOf('/')) : "";
        String version = apiVersion.substring(apiVersion.indexOf('/') + 1);
        try {
            if (BUILT_IN.contains(group)) return builtIn(object, version, kind, name);
            if (group.equals("monitoring.coreos.com") && version.equals("v1") && MONITORING.containsKey(kind))
                return monitoring(object, MONITORING.get(kind), name);
        } catch (RuntimeException e) {
            return List.of(name + ": " + e.getMessage());
        }
        return List.of(name + ": " + apiVersion + " " + kind + " is not a kind these manifests may use");
    }

    private static List<String> builtIn(JsonNode object, String version, String kind, String name) {
        String model = "io.kubernetes.client.openapi.models." + Character.toUpperCase(version.charAt(0))
                + version.substring(1) + kind;
        Class<?> type;
        Method validate;
        try {
            type = Class.forName(model);
            validate = type.getMethod("validateJsonElement", JsonElement.class);
        } catch (ReflectiveOperationException e) {
            return List.of(name + ": the API has no kind " + kind + " in version " + version);
        }
        try {
            validate.invoke(null, JsonParser.parseString(object.toString())); // fields, required fields, shapes
            CLIENT_JSON.deserialize(object.toString(), type); // and the types of numbers, booleans, dates
            return List.of();
        } catch (InvocationTargetException e) {
            return List.of(name + ": " + e.getCause().getMessage());
        } catch (JsonParseException | NumberFormatException e) {
            return List.of(name + ": " + e.getMessage());
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    private static List<String> monitoring(JsonNode object, Class<?> type, String name) {
        Object model;
        try {
            model = JSON.treeToValue(object, type);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            return List.of(name + ": " + e.getOriginalMessage());
        }
        List<String> out = new ArrayList<>();
        unknownFields(model, "", name, out);
        return out;
    }

    /** Every field the models took into their additional properties: a field the kind does not have. */
    private static void unknownFields(Object o, String path, String name, List<String> out) {
        if (o == null) return;
        if (o instanceof Collection<?> c) {
            int i = 0;
            for (Object e : c) unknownFields(e, path + "[" + i++ + "]", name, out);
            return;
        }
        if (o instanceof Map<?, ?> m) {
            for (Map.Entry<?, ?> e : m.entrySet()) unknownFields(e.getValue(), path + "." + e.getKey(), name, out);
            return;
        }
        if (!o.getClass().getName().startsWith("io.fabric8.")) return;
        for (Method getter : o.getClass().getMethods()) {
            if (!getter.getName().startsWith("get") || getter.getParameterCount() != 0) continue;
            if (getter.getDeclaringClass() == Object.class) continue;
            Object value;
            try {
                value = getter.invoke(o);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
            if (getter.getName().equals("getAdditionalProperties")) {
                if (value instanceof Map<?, ?> extra)
                    for (Object field : extra.keySet())
                        out.add(name + ": the field `" + path.replaceFirst("^\\.", "") + (path.isEmpty() ? "" : ".")
                                + field + "` is not defined in " + o.getClass().getSimpleName());
                continue;
            }
            String field = Character.toLowerCase(getter.getName().charAt(3))
                    + getter.getName().substring(4);
            unknownFields(value, path + "." + field, name, out);
        }
    }
}
