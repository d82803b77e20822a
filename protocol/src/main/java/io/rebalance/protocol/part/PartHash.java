package io.rebalance.protocol.part;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The stable hash bucket (0-99) of a partition-key value, the same in Java and in Postgres: the first 32 bits of the
 * MD5 of the value's text (as Postgres prints it: {@code 42}, {@code acme}, a lower-case uuid), unsigned, modulo 100.
 * MD5 because Postgres has it built in and its output never changes between versions, unlike {@code hashtext}.
 */
public final class PartHash {
    public static final int BUCKETS = 100;

    private PartHash() {}

    public static int bucket(String text) {
        byte[] d = md5().digest(text.getBytes(StandardCharsets.UTF_8));
        long first32 = ((d[0] & 0xffL) << 24) | ((d[1] & 0xffL) << 16) | ((d[2] & 0xffL) << 8) | (d[3] & 0xffL);
        return (int) (first32 % BUCKETS);
    }

    /** The same bucket computed by Postgres for a text expression. */
    public static String sql(String textExpression) {
        return "(('x' || substr(md5(" + textExpression + "), 1, 8))::bit(32)::bigint % " + BUCKETS + ")";
    }

    private static MessageDigest md5() {
        try {
            return MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has MD5", e);
        }
    }
}
