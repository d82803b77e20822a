package io.rebalance.protocol.part;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * A partition-key value as the part rules compare it: its text as Postgres prints it, and the whole number it is,
 * if it is one. Applications pass a {@code long}, an {@code int}, a {@code String} or a {@code UUID}.
 *
 * @param number null when the value is not a whole number
 */
public record PartValue(String text, BigInteger number) {
    private static final Pattern WHOLE = Pattern.compile("-?(0|[1-9][0-9]*)");

    /** @throws IllegalArgumentException for a null value, which no part can hold */
    public static PartValue of(Object value) {
        if (value == null) throw new IllegalArgumentException("a partition-key value is null; no part holds it");
        if (value instanceof PartValue v) return v;
        if (value instanceof Integer || value instanceof Long || value instanceof Short || value instanceof Byte)
            return whole(BigInteger.valueOf(((Number) value).longValue()));
        if (value instanceof BigInteger b) return whole(b);
        if (value instanceof BigDecimal d) {
            BigDecimal s = d.stripTrailingZeros();
            return s.scale() <= 0 ? whole(s.toBigIntegerExact()) : new PartValue(d.toPlainString(), null);
        }
        if (value instanceof UUID u) return new PartValue(u.toString(), null);
        String text = value.toString();
        return new PartValue(text, WHOLE.matcher(text).matches() ? new BigInteger(text) : null);
    }

    private static PartValue whole(BigInteger n) {
        return new PartValue(n.toString(), n);
    }
}
