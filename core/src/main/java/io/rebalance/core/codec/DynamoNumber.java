package io.rebalance.core.codec;

import java.math.BigDecimal;

/**
 * The rules of DynamoDB's number type: at most 38 significant digits, magnitude from 1E-130 up to below 1E126.
 * Values are kept as the exact decimal text; nothing here ever passes through a double.
 */
final class DynamoNumber {
    static final int MAX_DIGITS = 38;

    private DynamoNumber() {}

    /**
     * A plain decimal of at most 38 characters ({@code -123.45}, no exponent) always fits: it has at most 38 digits
     * and its magnitude lies between 1E-37 and 1E38.
     */
    static boolean isShortPlainDecimal(String text) {
        int n = text.length();
        if (n == 0 || n > MAX_DIGITS) return false;
        int i = text.charAt(0) == '-' ? 1 : 0;
        if (i == n) return false;
        boolean dot = false;
        boolean digit = false;
        for (; i < n; i++) {
            char c = text.charAt(i);
            if (c >= '0' && c <= '9') digit = true;
            else if (c == '.' && !dot) dot = true;
            else return false;
        }
        return digit;
    }

    /** @return {@code text} unchanged when DynamoDB can store it exactly as N */
    static String check(String text, String what) {
        if (isShortPlainDecimal(text)) return text; // the common case, without parsing a BigDecimal
        BigDecimal d;
        try {
            d = new BigDecimal(text);
        } catch (NumberFormatException e) {
            throw new ValueRefusedException(what + " '" + text + "' is not a decimal number");
        }
        if (d.signum() == 0) return text;
        BigDecimal stripped = d.stripTrailingZeros();
        if (stripped.precision() > MAX_DIGITS) {
            throw new ValueRefusedException(
                    what + " has " + stripped.precision() + " significant digits; DynamoDB numbers hold at most 38");
        }
        int exponent = stripped.precision() - stripped.scale() - 1; // position of the leading digit
        if (exponent >= 126 || exponent < -130) {
            throw new ValueRefusedException(what + " is outside DynamoDB's number range (1E-130 to 9.99E+125)");
        }
        return text;
    }
}
