package io.rebalance.verifier;

import java.math.BigInteger;

/**
 * A set of rows in 16 bytes: how many, and the sum (mod 2^64) of their 64-bit row hashes. The sum does not depend on
 * order, so Postgres and DynamoDB may each read in the order that is cheapest for them (docs/fingerprint.md).
 */
public record Fingerprint(long count, long sum) {
    public static final Fingerprint EMPTY = new Fingerprint(0, 0);

    /** From SQL's {@code count(*)} and exact {@code sum(int8)}, which is a numeric that may exceed 64 bits. */
    public static Fingerprint ofSql(long count, String exactSum) {
        return new Fingerprint(count, new BigInteger(exactSum).longValue());
    }

    /** {@code <count>:<sum as 16 hex digits>}, as results store it. */
    @Override
    public String toString() {
        return count + ":" + String.format("%016x", sum);
    }

    /** The fingerprint of both sets together. */
    public Fingerprint add(Fingerprint other) {
        return new Fingerprint(count + other.count, sum + other.sum);
    }

    public Fingerprint plus(long rowHash) {
        return new Fingerprint(count + 1, sum + rowHash);
    }
}
