package io.rebalance.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/** DynamoDB's wire JSON as the capacity model reads and answers it: items to size, and its error bodies. */
final class DynamoJson {
    private static final ObjectMapper JSON = new ObjectMapper();

    private DynamoJson() {}

    /** DynamoDB's JSON form of an item ({@code {"id": {"S": "x"}}}) as the SDK's values, to size it. */
    static Map<String, AttributeValue> attributes(JsonNode item) {
        Map<String, AttributeValue> out = new HashMap<>();
        item.fields().forEachRemaining(e -> out.put(e.getKey(), value(e.getValue())));
        return out;
    }

    private static AttributeValue value(JsonNode v) {
        String type = v.fieldNames().next();
        JsonNode x = v.get(type);
        return switch (type) {
            case "S" -> AttributeValue.fromS(x.asText());
            case "N" -> AttributeValue.fromN(x.asText());
            case "B" ->
                AttributeValue.fromB(SdkBytes.fromByteArray(Base64.getDecoder().decode(x.asText())));
            case "BOOL" -> AttributeValue.fromBool(x.asBoolean());
            case "NULL" -> AttributeValue.fromNul(true);
            case "M" -> AttributeValue.fromM(attributes(x));
            case "L" -> {
                List<AttributeValue> l = new ArrayList<>();
                for (JsonNode e : x) l.add(value(e));
                yield AttributeValue.fromL(l);
            }
            case "SS" -> {
                List<String> l = new ArrayList<>();
                for (JsonNode e : x) l.add(e.asText());
                yield AttributeValue.fromSs(l);
            }
            case "NS" -> {
                List<String> l = new ArrayList<>();
                for (JsonNode e : x) l.add(e.asText());
                yield AttributeValue.fromNs(l);
            }
            default -> AttributeValue.fromS(x.toString()); // BS and anything newer: sized by its text
        };
    }

    /** DynamoDB's throttling exception, with {@code reason} as its ThrottlingReasons name it. */
    static byte[] throttled(String reason) {
        ObjectNode e = JSON.createObjectNode();
        e.put("__type", "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException");
        e.put(
                "message",
                "The level of configured provisioned throughput for the table was exceeded. Consider"
                        + " increasing your provisioning level with the UpdateTable API. (capacity model: " + reason
                        + ")");
        ObjectNode r = e.putArray("ThrottlingReasons").addObject();
        r.put("reason", reason);
        return e.toString().getBytes(StandardCharsets.UTF_8);
    }

    static byte[] error(String type, String message) {
        ObjectNode e = JSON.createObjectNode();
        e.put("__type", "com.amazonaws.dynamodb.v20120810#" + type);
        e.put("message", message);
        return e.toString().getBytes(StandardCharsets.UTF_8);
    }
}
