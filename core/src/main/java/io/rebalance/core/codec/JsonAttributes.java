package io.rebalance.core.codec;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * JSON text to a DynamoDB attribute: objects to M, arrays to L, strings to S, booleans to BOOL, null to NULL and
 * numbers to N with their exact text. It reads tokens itself rather than through a tree of Java numbers so that
 * {@code 9223372036854775807} or {@code 0.1000000000000000055511151231257827} is never rounded through a double.
 */
public final class JsonAttributes {
    /** DynamoDB allows 32 levels of nested attributes. */
    static final int MAX_DEPTH = 32;

    private final JsonFactory factory = new JsonFactory();
    private final boolean checked;

    JsonAttributes() {
        this(true);
    }

    private JsonAttributes(boolean checked) {
        this.checked = checked;
    }

    /**
     * The same tree without DynamoDB's limits (depth, number range): how the verifier reads back a json column stored
     * as a string, to compare it by value.
     *
     * @throws ValueRefusedException when the text is not one JSON value
     */
    public static AttributeValue tree(String text) {
        return new JsonAttributes(false).parse(text);
    }

    AttributeValue parse(String text) {
        try (JsonParser p = factory.createParser(text)) {
            JsonToken first = p.nextToken();
            if (first == null) throw new ValueRefusedException("json value is empty");
            AttributeValue value = read(p, first, 0);
            if (p.nextToken() != null) throw new ValueRefusedException("json value has trailing content");
            return value;
        } catch (JsonProcessingException e) {
            throw new ValueRefusedException("json value does not parse: " + e.getOriginalMessage());
        } catch (IOException e) {
            throw new ValueRefusedException("json value does not parse: " + e.getMessage());
        }
    }

    private AttributeValue read(JsonParser p, JsonToken token, int depth) throws IOException {
        switch (token) {
            case START_OBJECT -> {
                checkDepth(depth);
                Map<String, AttributeValue> map = new LinkedHashMap<>();
                for (JsonToken t = p.nextToken(); t != JsonToken.END_OBJECT; t = p.nextToken()) {
                    String name = p.currentName();
                    map.put(name, read(p, p.nextToken(), depth + 1));
                }
                return AttributeValue.fromM(map);
            }
            case START_ARRAY -> {
                checkDepth(depth);
                List<AttributeValue> list = new ArrayList<>();
                for (JsonToken t = p.nextToken(); t != JsonToken.END_ARRAY; t = p.nextToken()) {
                    list.add(read(p, t, depth + 1));
                }
                return AttributeValue.fromL(list);
            }
            case VALUE_STRING -> {
                return AttributeValue.fromS(p.getText());
            }
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> {
                return AttributeValue.fromN(checked ? DynamoNumber.check(p.getText(), "json number") : p.getText());
            }
            case VALUE_TRUE -> {
                return AttributeValue.fromBool(true);
            }
            case VALUE_FALSE -> {
                return AttributeValue.fromBool(false);
            }
            case VALUE_NULL -> {
                return AttributeValue.fromNul(true);
            }
            default -> throw new ValueRefusedException("unexpected json token " + token);
        }
    }

    private void checkDepth(int depth) {
        if (checked && depth >= MAX_DEPTH) {
            throw new ValueRefusedException("json nests deeper than DynamoDB's 32 levels; set target.json: string to"
                    + " store json columns as strings");
        }
    }
}
