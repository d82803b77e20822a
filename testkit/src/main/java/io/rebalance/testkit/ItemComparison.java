package io.rebalance.testkit;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/** Compares DynamoDB items: numbers by value (DynamoDB normalizes 2.50 to 2.5), everything else type and value exactly. */
public final class ItemComparison {
    private ItemComparison() {}

    /** Adds one line per difference to {@code diffs}, naming its path. */
    public static void compare(
            String path, Map<String, AttributeValue> want, Map<String, AttributeValue> got, List<String> diffs) {
        if (!want.keySet().equals(got.keySet()))
            diffs.add(path + " attributes " + got.keySet() + " != " + want.keySet());
        for (String k : want.keySet()) {
            if (got.containsKey(k)) compare(path + "." + k, want.get(k), got.get(k), diffs);
        }
    }

    public static void compare(String path, AttributeValue want, AttributeValue got, List<String> diffs) {
        if (want.type() != got.type()) {
            diffs.add(path + ": type " + got.type() + " != " + want.type() + " (" + got + ")");
        } else if (want.n() != null) {
            if (new BigDecimal(want.n()).compareTo(new BigDecimal(got.n())) != 0)
                diffs.add(path + ": " + got.n() + " != " + want.n());
        } else if (want.hasL()) {
            if (want.l().size() != got.l().size()) diffs.add(path + ": " + got.l() + " != " + want.l());
            else
                for (int i = 0; i < want.l().size(); i++)
                    compare(path + "[" + i + "]", want.l().get(i), got.l().get(i), diffs);
        } else if (want.hasM()) {
            compare(path, want.m(), got.m(), diffs);
        } else if (!want.equals(got)) {
            diffs.add(path + ": " + got + " != " + want);
        }
    }
}
