package io.rebalance.protocol.part;

import java.util.List;

/**
 * One entry of {@code cutover.parts} as written: a name and at most one rule. Every field but {@code name} may be
 * null; which are set says the rule: {@code values}, {@code from}/{@code to} (a half-open range of the partition-key
 * value, either end left out for "unbounded"), {@code hashFrom}/{@code hashTo} (a half-open range of the 100 buckets
 * of {@link PartHash}), or none (the catch-all, which only the last entry may be). {@link PartMap#of} checks them.
 *
 * @param values whole numbers or strings
 * @param from a whole number or a string, with {@code to} of the same kind when both are given
 */
public record PartSpec(String name, List<Object> values, Object from, Object to, Integer hashFrom, Integer hashTo) {
    public static PartSpec rest(String name) {
        return new PartSpec(name, null, null, null, null, null);
    }

    public static PartSpec values(String name, Object... values) {
        return new PartSpec(name, List.of(values), null, null, null, null);
    }

    public static PartSpec range(String name, Object from, Object to) {
        return new PartSpec(name, null, from, to, null, null);
    }

    public static PartSpec hash(String name, Integer hashFrom, Integer hashTo) {
        return new PartSpec(name, null, null, null, hashFrom, hashTo);
    }
}
