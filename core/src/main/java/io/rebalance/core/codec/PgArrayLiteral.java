package io.rebalance.core.codec;

import java.util.ArrayList;
import java.util.List;

/**
 * Parses Postgres's text form of an array, {@code {1,2,NULL}} or {@code {{"a b","c\"d"},{NULL,""}}}, into nested
 * lists of element texts (null for an unquoted NULL). Elements keep their own text form, so the scalar rules of
 * {@link ValueCodec} apply to them unchanged. Bounds decorations ({@code [0:1]={...}}) are accepted and dropped:
 * DynamoDB lists start at 0 anyway.
 */
final class PgArrayLiteral {
    private final String text;
    private int pos;

    private PgArrayLiteral(String text) {
        this.text = text;
    }

    /** @return a list whose items are String, null, or (for multi-dimensional arrays) nested lists */
    static List<Object> parse(String text) {
        PgArrayLiteral p = new PgArrayLiteral(text);
        int eq = text.indexOf("={");
        if (text.startsWith("[") && eq > 0) p.pos = eq + 1;
        List<Object> out = p.list();
        if (p.pos != text.length()) throw new ValueRefusedException("array text has trailing content: " + text);
        return out;
    }

    private List<Object> list() {
        expect('{');
        List<Object> items = new ArrayList<>();
        if (peek() == '}') {
            pos++;
            return items;
        }
        while (true) {
            char c = peek();
            if (c == '{') items.add(list());
            else if (c == '"') items.add(quoted());
            else items.add(unquoted());
            char sep = text.charAt(pos++);
            if (sep == '}') return items;
            if (sep != ',')
                throw new ValueRefusedException("array text has '" + sep + "' where , or } belongs: " + text);
        }
    }

    private String quoted() {
        expect('"');
        StringBuilder sb = new StringBuilder();
        while (true) {
            char c = text.charAt(pos++);
            if (c == '"') return sb.toString();
            if (c == '\\') c = text.charAt(pos++);
            sb.append(c);
        }
    }

    private String unquoted() {
        int start = pos;
        while (pos < text.length() && text.charAt(pos) != ',' && text.charAt(pos) != '}') pos++;
        String raw = text.substring(start, pos).trim();
        return raw.equalsIgnoreCase("NULL") ? null : raw;
    }

    private char peek() {
        if (pos >= text.length()) throw new ValueRefusedException("array text ends early: " + text);
        return text.charAt(pos);
    }

    private void expect(char c) {
        if (peek() != c)
            throw new ValueRefusedException("array text has '" + peek() + "' where " + c + " belongs: " + text);
        pos++;
    }
}
