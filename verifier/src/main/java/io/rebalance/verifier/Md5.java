package io.rebalance.verifier;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/** One MessageDigest per thread: creating one per row costs more than hashing the row. */
final class Md5 {
    private static final ThreadLocal<MessageDigest> DIGEST = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has MD5", e);
        }
    });

    private Md5() {}

    static byte[] digest(byte[] data) {
        return DIGEST.get().digest(data);
    }
}
