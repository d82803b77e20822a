package io.rebalance.protocol.part;

import io.rebalance.protocol.CodePoints;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * A table's keyspace divided into named parts by its partition-key value ({@code cutover.parts}), each moved with
 * its own route, fences, window and rollback. The parts are matched in order and the first whose rule holds the value
 * wins; the last has no rule and takes every value left, so each value has exactly one part. A table without parts
 * is {@link #WHOLE}: one scope, as before parts existed.
 *
 * <p>A part's scope, the name its route, lock and fences go by, is the table's scope, a slash and the part's name
 * ({@code room_events/pilot}). Applications resolve a value's part here, from the configuration they are given,
 * with no round trip; Postgres resolves it with {@link #sqlPart}, which gives the same answer (PartSqlIT).
 */
public final class PartMap {
    public static final PartMap WHOLE = new PartMap(List.of());
    private static final String NAME = "[a-z0-9][a-z0-9_-]{0,39}";

    /** One part: its name and the values it holds. */
    public record Part(String name, PartRule rule) {}

    private final List<Part> parts;

    private PartMap(List<Part> parts) {
        this.parts = List.copyOf(parts);
    }

    /**
     * @param specs the entries of {@code cutover.parts}; empty for a table without parts
     * @throws IllegalArgumentException naming every problem, as {@link #problems} lists them
     */
    public static PartMap of(List<PartSpec> specs) {
        List<String> problems = problems(specs, "cutover.parts");
        if (!problems.isEmpty()) throw new IllegalArgumentException(String.join("; ", problems));
        List<Part> parts = new ArrayList<>();
        for (PartSpec s : specs) parts.add(new Part(s.name(), rule(s)));
        return new PartMap(parts);
    }

    /** What is wrong with {@code specs}, each naming its key under {@code key} ({@code cutover.parts[2].name}). */
    public static List<String> problems(List<PartSpec> specs, String key) {
        List<String> out = new ArrayList<>();
        Map<String, Integer> seen = new HashMap<>();
        for (int i = 0; i < specs.size(); i++) {
            PartSpec s = specs.get(i);
            String at = key + "[" + i + "]";
            boolean last = i == specs.size() - 1;
            if (s == null) {
                out.add(at + " is empty; expected {name: ..., values|from/to|hashFrom/hashTo}");
                continue;
            }
            if (s.name() == null || !s.name().matches(NAME)) {
                out.add(at + ".name='" + s.name() + "' is not valid; expected 1-40 lower-case letters, digits, _ or -,"
                        + " starting with a letter or digit (it names the part in flags, keys and metrics)");
            } else if (seen.putIfAbsent(s.name(), i) != null) {
                out.add(at + ".name='" + s.name() + "' is not valid; expected a name no other part has (" + key + "["
                        + seen.get(s.name()) + "] has it): rename one");
            }
            int rules = (s.values() != null ? 1 : 0)
                    + (s.from() != null || s.to() != null ? 1 : 0)
                    + (s.hashFrom() != null || s.hashTo() != null ? 1 : 0);
            if (rules > 1) {
                out.add(at + " has " + rules + " rules; expected one of values, from/to or hashFrom/hashTo per part"
                        + " (split it into parts)");
            } else if (rules == 0 && !last) {
                out.add(at + " ('" + s.name() + "') has no rule, but only the last part may (it takes every value"
                        + " left); give it values, from/to or hashFrom/hashTo, or move it last");
            } else if (rules == 1) {
                problemsOfRule(s, at, out);
            }
            if (last && rules != 0) {
                out.add(key + " has no last part with only a name, so some values would have no part; add"
                        + " {name: rest} at the end");
            }
        }
        return out;
    }

    private static void problemsOfRule(PartSpec s, String at, List<String> out) {
        if (s.values() != null) {
            if (s.values().isEmpty()) out.add(at + ".values is empty; expected at least one value");
            for (int k = 0; k < s.values().size(); k++) {
                if (!scalar(s.values().get(k))) {
                    out.add(at + ".values[" + k + "]='" + s.values().get(k) + "' is not valid; expected a whole"
                            + " number or a string");
                }
            }
        } else if (s.from() != null || s.to() != null) {
            for (Object[] bound : new Object[][] {{"from", s.from()}, {"to", s.to()}}) {
                if (!scalar(bound[1])) {
                    out.add(at + "." + bound[0] + "='" + bound[1] + "' is not valid; expected a whole number or a"
                            + " string");
                }
            }
            if (s.from() != null && s.to() != null && scalar(s.from()) && scalar(s.to())) {
                if (whole(s.from()) != whole(s.to())) {
                    out.add(at + " has from='" + s.from() + "' and to='" + s.to() + "' of two kinds; expected two whole"
                            + " numbers (a bigint key) or two strings (a text or uuid key)");
                } else if (compare(s.from(), s.to()) >= 0) {
                    out.add(at + " has from='" + s.from() + "' not below to='" + s.to() + "'; expected from < to (the"
                            + " range is half-open: from included, to not)");
                }
            }
        } else {
            int from = s.hashFrom() == null ? 0 : s.hashFrom();
            int to = s.hashTo() == null ? PartHash.BUCKETS : s.hashTo();
            if (from < 0 || to > PartHash.BUCKETS || from >= to) {
                out.add(at + " has hashFrom=" + from + " and hashTo=" + to + "; expected 0 <= hashFrom < hashTo <= "
                        + PartHash.BUCKETS + " (buckets of a stable hash of the value)");
            }
        }
    }

    private static boolean scalar(Object o) {
        return o == null || o instanceof String || whole(o);
    }

    private static boolean whole(Object o) {
        return o instanceof Integer || o instanceof Long || o instanceof BigInteger;
    }

    private static int compare(Object a, Object b) {
        if (a == null || b == null) return -1;
        if (whole(a)) return new BigInteger(a.toString()).compareTo(new BigInteger(b.toString()));
        return CodePoints.compare((String) a, (String) b);
    }

    private static PartRule rule(PartSpec s) {
        if (s.values() != null)
            return new PartRule.Values(s.values().stream()
                    .map(v -> PartValue.of(v).text())
                    .collect(Collectors.toCollection(LinkedHashSet::new)));
        if (s.from() != null || s.to() != null) {
            Object any = s.from() != null ? s.from() : s.to();
            if (whole(any)) {
                return new PartRule.NumberRange(
                        s.from() == null ? null : new BigInteger(s.from().toString()),
                        s.to() == null ? null : new BigInteger(s.to().toString()));
            }
            return new PartRule.TextRange((String) s.from(), (String) s.to());
        }
        if (s.hashFrom() != null || s.hashTo() != null) {
            return new PartRule.HashRange(
                    s.hashFrom() == null ? 0 : s.hashFrom(), s.hashTo() == null ? PartHash.BUCKETS : s.hashTo());
        }
        return new PartRule.Rest();
    }

    /** Whether the table has parts; without them it moves whole, under the table's scope. */
    public boolean parted() {
        return !parts.isEmpty();
    }

    public List<Part> parts() {
        return parts;
    }

    public List<String> names() {
        return parts.stream().map(Part::name).toList();
    }

    public Optional<Part> part(String name) {
        return parts.stream().filter(p -> p.name().equals(name)).findFirst();
    }

    /**
     * @param value the row's partition-key value: a {@code long}, {@code int}, {@code String} or {@code UUID}
     * @throws IllegalStateException when the table has no parts
     * @throws IllegalArgumentException for a null value, or a value a range of numbers cannot compare
     */
    public Part partOf(Object value) {
        if (!parted()) throw new IllegalStateException("the table has no parts (cutover.parts is empty)");
        PartValue v = PartValue.of(value);
        for (Part p : parts) if (p.rule().matches(v)) return p;
        throw new IllegalStateException("no part holds '" + v.text() + "'; the last part takes every value");
    }

    /** The scope of the value's part, or {@code base} itself when the table has no parts. */
    public String scopeOf(String base, Object value) {
        return parted() ? scope(base, partOf(value).name()) : base;
    }

    /** A part's scope: the table's scope, a slash and the part's name. */
    public static String scope(String base, String part) {
        return base + "/" + part;
    }

    /** The part a scope names ({@code base/part}), or null for a table's own scope. */
    public static String partOfScope(String scope) {
        int slash = scope.lastIndexOf('/');
        return slash > 0 ? scope.substring(slash + 1) : null;
    }

    /** The scopes of every part, in order; the table's scope alone when it has none. */
    public List<String> scopes(String base) {
        return parted() ? names().stream().map(n -> scope(base, n)).toList() : List.of(base);
    }

    /** A SQL expression giving the part's name of a row, by its quoted partition-key {@code column}. */
    public String sqlPart(String column) {
        if (!parted()) throw new IllegalStateException("the table has no parts (cutover.parts is empty)");
        StringBuilder out = new StringBuilder("CASE");
        for (Part p : parts) {
            if (p.rule() instanceof PartRule.Rest) break;
            out.append(" WHEN ").append(p.rule().sql(column)).append(" THEN ").append(PartRule.literal(p.name()));
        }
        return out.append(" ELSE ")
                .append(PartRule.literal(parts.get(parts.size() - 1).name()))
                .append(" END")
                .toString();
    }

    /** A SQL condition holding for the rows of part {@code name}: the first rule that holds names it. */
    public String sqlFilter(String name, String column) {
        if (part(name).isEmpty()) throw new IllegalArgumentException("no part is named '" + name + "'");
        return "(" + sqlPart(column) + ") = " + PartRule.literal(name);
    }

    /** A SQL condition holding for the rows of any of the parts {@code names}. */
    public String sqlFilter(Collection<String> names, String column) {
        for (String name : names)
            if (part(name).isEmpty()) throw new IllegalArgumentException("no part is named '" + name + "'");
        return "(" + sqlPart(column) + ") IN ("
                + String.join(
                        ", ", names.stream().sorted().map(PartRule::literal).toList())
                + ")";
    }

    /**
     * The parts as one line of YAML's flow form, which {@code --set cutover.parts=...} reads back; two maps with
     * the same text divide the keyspace the same way.
     */
    public String written() {
        return parts.stream()
                .map(p -> "{name: " + p.name()
                        + (p.rule().written().isEmpty() ? "" : ", " + p.rule().written()) + "}")
                .collect(Collectors.joining(", ", "[", "]"));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PartMap m && m.written().equals(written());
    }

    @Override
    public int hashCode() {
        return written().hashCode();
    }

    @Override
    public String toString() {
        return written();
    }
}
