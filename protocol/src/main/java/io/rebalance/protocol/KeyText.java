package io.rebalance.protocol;

import java.util.ArrayList;
import java.util.List;

/**
 * One text per row key, which every process and application uses where a key is named (the target-write log, the
 * tail's touched keys, the verifier's differences, repairs): a one-column key is its value's text; a two-column key
 * is a JSON array of its parts exactly as Postgres prints {@code jsonb_build_array(a, b)::text}, such as
 * {@code [7, 1823]} or {@code ["acme", "01J…"]}, so the SQL side builds the same text server-side and parses it
 * back with {@code ->>}. A part is a number (bigint) or a string (text, uuid); numbers are written as given, which
 * must be their canonical integer text (no leading zeros, no exponent): Postgres prints integers so, and DynamoDB
 * returns an N key normalized.
 */
public final class KeyText {
    private KeyText() {}

    /** A key part's text and whether it is a number (a JSON number) or a string. */
    public record Part(String text, boolean number) {}

    /** The text of a key of these parts: the part's own text for one part, a JSON array for more. */
    public static String of(List<Part> parts) {
        if (parts.size() == 1) return parts.get(0).text();
        StringBuilder out = new StringBuilder("[");
        for (int i = 0; i < parts.size(); i++) {
            if (i > 0) out.append(", "); // jsonb's separator
            Part p = parts.get(i);
            if (p.number()) out.append(p.text());
            else quote(p.text(), out);
        }
        return out.append(']').toString();
    }

    /**
     * The parts' texts of a key text made by {@link #of} with {@code n} parts.
     *
     * @throws IllegalArgumentException when the text is not such a key
     */
    public static List<String> parts(String text, int n) {
        if (n == 1) return List.of(text);
        List<String> out = new ArrayList<>(n);
        int i = expect(text, 0, '[');
        while (true) {
            StringBuilder part = new StringBuilder();
            if (i < text.length() && text.charAt(i) == '"') i = unquote(text, i, part);
            else {
                int start = i;
                while (i < text.length() && text.charAt(i) != ',' && text.charAt(i) != ']') i++;
                part.append(text, start, i);
                if (part.length() == 0) throw bad(text);
            }
            out.add(part.toString());
            if (i < text.length() && text.charAt(i) == ']') break;
            i = expect(text, i, ',');
            i = expect(text, i, ' ');
        }
        if (i != text.length() - 1 || out.size() != n) throw bad(text);
        return out;
    }

    /** A JSON string as Postgres' {@code escape_json} writes it (in jsonb text too). */
    public static void quote(String s, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            switch (ch) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (ch < 0x20) out.append(String.format("\\u%04x", (int) ch));
                    else out.append(ch);
                }
            }
        }
        out.append('"');
    }

    private static int unquote(String text, int at, StringBuilder out) {
        int i = at + 1;
        while (i < text.length()) {
            char ch = text.charAt(i++);
            if (ch == '"') return i;
            if (ch != '\\') {
                out.append(ch);
                continue;
            }
            if (i >= text.length()) throw bad(text);
            char esc = text.charAt(i++);
            switch (esc) {
                case '"', '\\', '/' -> out.append(esc);
                case 'b' -> out.append('\b');
                case 'f' -> out.append('\f');
                case 'n' -> out.append('\n');
                case 'r' -> out.append('\r');
                case 't' -> out.append('\t');
                case 'u' -> {
                    if (i + 4 > text.length()) throw bad(text);
                    out.append((char) Integer.parseInt(text.substring(i, i + 4), 16));
                    i += 4;
                }
                default -> throw bad(text);
            }
        }
        throw bad(text);
    }

    private static int expect(String text, int i, char ch) {
        if (i >= text.length() || text.charAt(i) != ch) throw bad(text);
        return i + 1;
    }

    private static IllegalArgumentException bad(String text) {
        return new IllegalArgumentException("'" + text + "' is not a key of this table's two-column key");
    }
}
