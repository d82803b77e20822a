package io.rebalance.core.codec;

import java.util.HexFormat;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import software.amazon.awssdk.core.SdkBytes;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Maps one Postgres value, given as its text form, to a DynamoDB attribute.
 *
 * <p>The text form is read under pinned session settings (see {@code SourceSession}: TimeZone UTC, DateStyle ISO,
 * bytea hex, IntervalStyle iso_8601), so it is the same on every connection. Working from text keeps every number
 * exact (a bigint or a 38-digit numeric is never a double) and lets the verifier hash the very same text in SQL.
 *
 * <p>The rules, per {@link ColumnKind} (docs/codec.md has the table with examples):
 * integers, numerics and finite floats become N with their exact text; NaN and infinities, which N cannot hold,
 * become S; bool becomes BOOL; timestamps become ISO-8601 strings with exactly six fractional digits (timestamptz
 * with a Z, in UTC; timestamp without zone, because it has none to state); bytea becomes B; json becomes a map or a
 * string by choice; everything else becomes S with its text. NULL is handled by the caller.
 */
public final class ValueCodec {
    private static final Pattern TIMESTAMP = Pattern.compile(
            "(\\d{4,})-(\\d\\d)-(\\d\\d) (\\d\\d):(\\d\\d):(\\d\\d)(?:\\.(\\d{1,6}))?(?:([+-]\\d\\d)(?::?(\\d\\d))?)?( BC)?");
    private static final Pattern DATE = Pattern.compile("(\\d{4,})-(\\d\\d)-(\\d\\d)( BC)?");

    private final JsonAttributes json;
    private final boolean jsonAsMap;

    public ValueCodec(boolean jsonAsMap) {
        this.jsonAsMap = jsonAsMap;
        this.json = new JsonAttributes();
    }

    /**
     * @param text the value's Postgres text form; never null (NULL does not reach here)
     * @throws ValueRefusedException when DynamoDB cannot hold the value as mapped
     */
    public AttributeValue encode(ColumnKind kind, String text) {
        return switch (kind) {
            case STRING, UUID, OTHER -> s(text);
            case INTEGER -> n(text);
            case NUMERIC, FLOAT -> isSpecialNumber(text) ? s(text) : n(DynamoNumber.check(text, "number"));
            case BOOL -> AttributeValue.fromBool(parseBool(text));
            case JSON -> jsonAsMap ? json.parse(text) : s(text);
            case TIMESTAMP -> s(timestamp(text, false));
            case TIMESTAMPTZ -> s(timestamp(text, true));
            case DATE -> s(date(text));
            case BYTEA -> AttributeValue.fromB(SdkBytes.fromByteArrayUnsafe(hexBytes(text)));
        };
    }

    /** bytea read directly as bytes (the usual path for a scalar column, which skips hex parsing). */
    public AttributeValue encodeBytes(byte[] bytes) {
        return AttributeValue.fromB(SdkBytes.fromByteArrayUnsafe(bytes));
    }

    private static AttributeValue s(String text) {
        return AttributeValue.fromS(text);
    }

    private static AttributeValue n(String text) {
        return AttributeValue.fromN(text);
    }

    private static boolean isSpecialNumber(String text) {
        return text.equals("NaN") || text.equals("Infinity") || text.equals("-Infinity");
    }

    private static boolean parseBool(String text) {
        return switch (text) {
            case "t", "true" -> true;
            case "f", "false" -> false;
            default -> throw new ValueRefusedException("bool '" + text + "' is neither t nor f");
        };
    }

    /** {@code 2024-10-20 02:15:30.5+00} becomes {@code 2024-10-20T02:15:30.500000Z}; infinities stay as words. */
    public static String timestamp(String text, boolean withZone) {
        if (text.equals("infinity") || text.equals("-infinity")) return text;
        String common = commonTimestamp(text, withZone);
        if (common != null) return common;
        Matcher m = TIMESTAMP.matcher(text);
        if (!m.matches()) {
            throw new ValueRefusedException("timestamp '" + text + "' is not in ISO form; is DateStyle pinned to ISO?");
        }
        if (withZone
                && (m.group(8) == null
                        || !m.group(8).equals("+00")
                        || (m.group(9) != null && !m.group(9).equals("00")))) {
            throw new ValueRefusedException("timestamptz '" + text + "' is not in UTC; is TimeZone pinned to UTC?");
        }
        String fraction = m.group(7) == null ? "" : m.group(7);
        StringBuilder out = new StringBuilder(27);
        out.append(year(m.group(1), m.group(10) != null))
                .append('-')
                .append(m.group(2))
                .append('-')
                .append(m.group(3))
                .append('T')
                .append(m.group(4))
                .append(':')
                .append(m.group(5))
                .append(':')
                .append(m.group(6))
                .append('.')
                .append(fraction)
                .append("000000", 0, 6 - fraction.length());
        if (withZone) out.append('Z');
        return out.toString();
    }

    /**
     * The form nearly every value has ({@code 2024-10-20 02:15:30.5+00}: a four-digit year AD, zero to six fractional
     * digits, {@code +00} exactly when it has a zone) read without the pattern, which took a fifth of the codec's
     * time in the tail's profile; null for anything else, which the pattern then reads or refuses as before.
     */
    private static String commonTimestamp(String text, boolean withZone) {
        int n = text.length();
        if (n < 19 || text.charAt(4) != '-' || text.charAt(7) != '-' || text.charAt(10) != ' ') return null;
        if (text.charAt(13) != ':' || text.charAt(16) != ':') return null;
        for (int i = 0; i < 19; i++) {
            if (i != 4 && i != 7 && i != 10 && i != 13 && i != 16 && !isDigit(text.charAt(i))) return null;
        }
        int i = 19;
        int fractionFrom = i;
        if (i < n && text.charAt(i) == '.') {
            fractionFrom = ++i;
            while (i < n && isDigit(text.charAt(i))) i++;
            if (i == fractionFrom || i - fractionFrom > 6) return null;
        }
        int fractionTo = i;
        boolean zoned = n - i == 3 && text.startsWith("+00", i);
        if (i != n && !zoned) return null;
        if (withZone != zoned) return null;
        int digits = fractionTo - fractionFrom;
        StringBuilder out = new StringBuilder(27);
        out.append(text, 0, 10).append('T').append(text, 11, 19).append('.');
        out.append(text, fractionFrom, fractionTo).append("000000", 0, 6 - digits);
        if (withZone) out.append('Z');
        return out.toString();
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    static String date(String text) {
        if (text.equals("infinity") || text.equals("-infinity")) return text;
        Matcher m = DATE.matcher(text);
        if (!m.matches()) {
            throw new ValueRefusedException("date '" + text + "' is not in ISO form; is DateStyle pinned to ISO?");
        }
        return year(m.group(1), m.group(4) != null) + "-" + m.group(2) + "-" + m.group(3);
    }

    /** ISO-8601 years: 1 BC is year 0000, 44 BC is -0043 (astronomical numbering). */
    private static String year(String digits, boolean bc) {
        if (!bc) return digits;
        long y = 1 - Long.parseLong(digits);
        return y == 0 ? "0000" : String.format("-%04d", -y);
    }

    /** Postgres hex bytea text: {@code \x0a0b}. */
    static byte[] hexBytes(String text) {
        if (!text.startsWith("\\x")) {
            throw new ValueRefusedException("bytea text does not start with \\x; is bytea_output pinned to hex?");
        }
        return HexFormat.of().parseHex(text, 2, text.length());
    }
}
