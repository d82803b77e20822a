package io.rebalance.core.codec;

import java.math.BigDecimal;

/**
 * The rules of DynamoDB's number type: at most 38 significant digits, magnitude from 1E-130 up to below 1E126.
 * Values are kept as the exact decimal text; nothing here ever passes through a double.
 */
final class DynamoNumber {
    static final int MAX_DIGITS = 38;

    private DynamoNumber() {}

    /** @return {@code text} unchanged when DynamoDB can store it exactly as N */
    static String check(String text, String what) {
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
