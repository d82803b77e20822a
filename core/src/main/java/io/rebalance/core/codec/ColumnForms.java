package io.rebalance.core.codec;

import java.util.Set;

/**
 * Which columns are stored in another form than their kind's (docs/codec.md): json as its text rather than a map
 * ({@code target.jsonAsString}, or all of them with {@code target.json: string}), numbers as their text rather than N
 * ({@code target.numbersAsString}). The way out for values DynamoDB cannot hold as mapped: a json document with a
 * number outside DynamoDB's range or nested too deep, a number with more than 38 significant digits. The codec, its
 * inverse and both sides of the canonical encoding follow it, so a row stored this way verifies MATCH.
 *
 * @param jsonAsMap the default for json columns ({@code target.json})
 */
public record ColumnForms(boolean jsonAsMap, Set<String> jsonAsString, Set<String> numbersAsString) {
    public ColumnForms {
        jsonAsString = Set.copyOf(jsonAsString);
        numbersAsString = Set.copyOf(numbersAsString);
    }

    /** Every json column one way, every number as N. */
    public static ColumnForms of(boolean jsonAsMap) {
        return new ColumnForms(jsonAsMap, Set.of(), Set.of());
    }

    /** Whether {@code column}, a json column, is stored as a map (else as its text). */
    public boolean jsonAsMap(String column) {
        return jsonAsMap && !jsonAsString.contains(column);
    }

    /** Whether {@code column}, a numeric or float column, is stored as its text (S) rather than N. */
    public boolean numberAsString(String column) {
        return numbersAsString.contains(column);
    }
}
