package io.rebalance.core.codec;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.HexFormat;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The inverse of {@link ValueCodec}: one DynamoDB attribute back to the Postgres text form of its column's type, for
 * the reverse stream that keeps Postgres current while a rollback is possible (ADR 7). The text is bound as an
 * untyped parameter, so Postgres parses it with the column's own input function and nothing passes through a Java
 * number or date type.
 *
 * <p>What DynamoDB does not keep cannot come back, and is value-equal rather than text-equal: a numeric's trailing
 * zeros ({@code 2.50} comes back as {@code 2.5}; DynamoDB normalizes numbers), and a {@code json} column's spacing,
 * key order and number spelling when json is stored as a map ({@code jsonb} normalizes these itself). With json
 * stored as a map, a top-level JSON {@code null} was stored as DynamoDB's NULL, the same as SQL NULL, and comes back
 * as SQL NULL; a table that must tell them apart stores json as strings ({@code target.json: string}).
 */
public final class ValueDecoder {
    private static final Pattern TIMESTAMP =
            Pattern.compile("(-?\\d{4,})-(\\d\\d)-(\\d\\d)T(\\d\\d):(\\d\\d):(\\d\\d)(?:\\.(\\d{1,6}))?(Z)?");
    private static final Pattern DATE = Pattern.compile("(-?\\d{4,})-(\\d\\d)-(\\d\\d)");

    private final JsonFactory json = new JsonFactory();
    private final boolean jsonAsMap;

    public ValueDecoder(boolean jsonAsMap) {
        this.jsonAsMap = jsonAsMap;
    }

    /**
     * @param v a scalar attribute, never DynamoDB's NULL (the caller maps that to SQL NULL)
     * @return the Postgres text form
     * @throws ValueRefusedException when the attribute's type is not what the column's kind is stored as
     */
    public String decode(ColumnKind kind, AttributeValue v) {
        return switch (kind) {
            case STRING, UUID, OTHER -> s(kind, v);
            case INTEGER -> n(kind, v);
            case NUMERIC, FLOAT -> v.s() != null ? specialNumber(v.s()) : n(kind, v);
            case BOOL -> {
                if (v.bool() == null) throw mismatch(kind, v, "BOOL");
                yield v.bool() ? "t" : "f";
            }
            case JSON -> jsonAsMap ? jsonText(v) : s(kind, v);
            case TIMESTAMP -> timestamp(s(kind, v), false);
            case TIMESTAMPTZ -> timestamp(s(kind, v), true);
            case DATE -> date(s(kind, v));
            case BYTEA -> {
                if (v.b() == null) throw mismatch(kind, v, "B");
                yield "\\x" + HexFormat.of().formatHex(v.b().asByteArrayUnsafe());
            }
        };
    }

    private static String s(ColumnKind kind, AttributeValue v) {
        if (v.s() == null) throw mismatch(kind, v, "S");
        return v.s();
    }

    private static String n(ColumnKind kind, AttributeValue v) {
        if (v.n() == null) throw mismatch(kind, v, "N");
        return v.n();
    }

    private static String specialNumber(String text) {
        if (text.equals("NaN") || text.equals("Infinity") || text.equals("-Infinity")) return text;
        throw new ValueRefusedException("string '" + text + "' where a number belongs (only NaN, Infinity and"
                + " -Infinity are stored as strings)");
    }

    private static ValueRefusedException mismatch(ColumnKind kind, AttributeValue v, String expected) {
        return new ValueRefusedException(
                "a " + kind.name().toLowerCase() + " value is stored as " + expected + ", not " + v.type());
    }

    /** {@code -0043-03-15T12:00:00.000000Z} becomes {@code 0044-03-15 12:00:00.000000+00 BC}. */
    static String timestamp(String iso, boolean withZone) {
        if (iso.equals("infinity") || iso.equals("-infinity")) return iso;
        Matcher m = TIMESTAMP.matcher(iso);
        if (!m.matches() || (m.group(8) != null) != withZone) {
            throw new ValueRefusedException("timestamp '" + iso + "' is not in the stored ISO form"
                    + (withZone ? " (with Z)" : " (without zone)"));
        }
        Year y = Year.of(m.group(1));
        String fraction = m.group(7) == null ? "" : "." + m.group(7);
        return y.digits + "-" + m.group(2) + "-" + m.group(3) + " " + m.group(4) + ":" + m.group(5) + ":" + m.group(6)
                + fraction + (withZone ? "+00" : "") + (y.bc ? " BC" : "");
    }

    static String date(String iso) {
        if (iso.equals("infinity") || iso.equals("-infinity")) return iso;
        Matcher m = DATE.matcher(iso);
        if (!m.matches()) throw new ValueRefusedException("date '" + iso + "' is not in the stored ISO form");
        Year y = Year.of(m.group(1));
        return y.digits + "-" + m.group(2) + "-" + m.group(3) + (y.bc ? " BC" : "");
    }

    /** Astronomical years back to Postgres's era: year 0 is 1 BC, -43 is 44 BC. */
    private record Year(String digits, boolean bc) {
        static Year of(String astronomical) {
            long y = Long.parseLong(astronomical);
            if (y > 0) return new Year(astronomical, false);
            return new Year(String.format("%04d", 1 - y), true);
        }
    }

    private String jsonText(AttributeValue v) {
        StringWriter out = new StringWriter();
        try (JsonGenerator g = json.createGenerator(out)) {
            write(g, v);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a StringWriter does not fail
        }
        return out.toString();
    }

    private static void write(JsonGenerator g, AttributeValue v) throws IOException {
        switch (v.type()) {
            case M -> {
                g.writeStartObject();
                for (Map.Entry<String, AttributeValue> e : v.m().entrySet()) {
                    g.writeFieldName(e.getKey());
                    write(g, e.getValue());
                }
                g.writeEndObject();
            }
            case L -> {
                g.writeStartArray();
                for (AttributeValue item : v.l()) write(g, item);
                g.writeEndArray();
            }
            case S -> g.writeString(v.s());
            case N -> g.writeNumber(v.n()); // the exact text, never through a double
            case BOOL -> g.writeBoolean(v.bool());
            case NUL -> g.writeNull();
            default -> throw new ValueRefusedException("a json value cannot hold a DynamoDB " + v.type());
        }
    }
}
