package io.rebalance.protocol.part;

import io.rebalance.protocol.CodePoints;
import io.rebalance.protocol.KeyText;
import java.math.BigInteger;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Which partition-key values a part holds, in Java ({@link #matches}) and in SQL ({@link #sql}) alike; a test in
 * {@code cutover} (PartSqlIT) holds the two to the same answer for every kind.
 */
public sealed interface PartRule {
    boolean matches(PartValue v);

    /** A condition on {@code column}, a quoted column name of a bigint, text or uuid column. */
    String sql(String column);

    /** The rule as {@code cutover.parts} writes it, without the name: {@code values: [42]}, or empty for the rest. */
    String written();

    /** A list of values, compared by their text (so 42 and "42" are one value), in the order written. */
    record Values(Set<String> texts) implements PartRule {
        public Values {
            texts = Collections.unmodifiableSet(new LinkedHashSet<>(texts));
        }

        public boolean matches(PartValue v) {
            return texts.contains(v.text());
        }

        public String sql(String column) {
            return column + "::text IN ("
                    + texts.stream().map(PartRule::literal).collect(Collectors.joining(", ")) + ")";
        }

        public String written() {
            return "values: ["
                    + String.join(", ", texts.stream().map(PartRule::written).toList()) + "]";
        }
    }

    /** A half-open range of whole numbers; a bigint column. @param from null for no lower end */
    record NumberRange(BigInteger from, BigInteger to) implements PartRule {
        public boolean matches(PartValue v) {
            if (v.number() == null) {
                throw new IllegalArgumentException("partition-key value '" + v.text()
                        + "' is not a whole number, but the parts are ranges of numbers");
            }
            return (from == null || v.number().compareTo(from) >= 0)
                    && (to == null || v.number().compareTo(to) < 0);
        }

        public String sql(String column) {
            String low = from == null ? null : column + " >= " + from;
            String high = to == null ? null : column + " < " + to;
            return and(low, high);
        }

        public String written() {
            return bounds(from == null ? null : from.toString(), to == null ? null : to.toString());
        }
    }

    /** A half-open range of texts in code-point order ({@code COLLATE "C"}). @param from null for no lower end */
    record TextRange(String from, String to) implements PartRule {
        public boolean matches(PartValue v) {
            return (from == null || CodePoints.compare(v.text(), from) >= 0)
                    && (to == null || CodePoints.compare(v.text(), to) < 0);
        }

        public String sql(String column) {
            String text = column + "::text COLLATE \"C\"";
            String low = from == null ? null : text + " >= " + literal(from);
            String high = to == null ? null : text + " < " + literal(to);
            return and(low, high);
        }

        public String written() {
            return bounds(from == null ? null : quoted(from), to == null ? null : quoted(to));
        }
    }

    /** A half-open range of {@link PartHash} buckets. */
    record HashRange(int from, int to) implements PartRule {
        public boolean matches(PartValue v) {
            int b = PartHash.bucket(v.text());
            return b >= from && b < to;
        }

        public String sql(String column) {
            return PartHash.sql(column + "::text") + " BETWEEN " + from + " AND " + (to - 1);
        }

        public String written() {
            return "hashFrom: " + from + ", hashTo: " + to;
        }
    }

    /** Every value left: the last part. */
    record Rest() implements PartRule {
        public boolean matches(PartValue v) {
            return true;
        }

        public String sql(String column) {
            return "true";
        }

        public String written() {
            return "";
        }
    }

    private static String and(String low, String high) {
        if (low == null) return high;
        if (high == null) return low;
        return low + " AND " + high;
    }

    private static String bounds(String from, String to) {
        if (from == null) return "to: " + to;
        if (to == null) return "from: " + from;
        return "from: " + from + ", to: " + to;
    }

    /** A SQL string literal (standard_conforming_strings, on since Postgres 9.1). */
    static String literal(String text) {
        return "'" + text.replace("'", "''") + "'";
    }

    /** A listed value as the YAML flow form writes it: a whole number bare (42 and "42" are one value). */
    static String written(String text) {
        return text.matches("-?(0|[1-9][0-9]*)") ? text : quoted(text);
    }

    /** A range's text bound, always quoted: bare, "100" would read back as a number and change the order. */
    static String quoted(String text) {
        StringBuilder out = new StringBuilder();
        KeyText.quote(text, out);
        return out.toString();
    }
}
