package io.rebalance.cdc;

import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Secrets Debezium's engine hands to parts of this process (the Postgres password, the Redis settings), kept out of its
 * properties: the engine logs its properties whole at DEBUG, unmasked. A property holds a random handle instead, and
 * the part that needs the secret looks it up here, in the same JVM.
 */
final class EngineSecrets {
    private static final Map<String, Object> BY_HANDLE = new ConcurrentHashMap<>();

    private EngineSecrets() {}

    /** @param secret a password, or settings that hold one (the Redis settings) */
    static String keep(Object secret) {
        String handle = "secret:" + UUID.randomUUID();
        BY_HANDLE.put(handle, secret);
        return handle;
    }

    static String get(String handle) {
        return get(handle, String.class);
    }

    static <T> T get(String handle, Class<T> type) {
        Object secret = BY_HANDLE.get(handle);
        if (secret == null) throw new IllegalStateException("no secret kept under " + handle);
        return type.cast(secret);
    }

    /** Once the engine that used them ended: every handle among {@code properties}' values. */
    static void forget(Properties properties) {
        properties.values().forEach(BY_HANDLE::remove);
    }
}
