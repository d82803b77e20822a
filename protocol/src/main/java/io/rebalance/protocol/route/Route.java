package io.rebalance.protocol.route;

import java.util.Map;

/**
 * One scope's routing entry.
 *
 * @param epoch how many times the entry was set (1 when created)
 * @param token the fencing token of the exclusive lease that set it last (0 when created)
 * @param shadowSample the fraction of reads through {@code Router} also read from the other store and compared (0 to
 *     1; 0 when never set): in the entry so that the read that looks up the route learns it in the same call
 */
public record Route(
        String scope,
        Target read,
        Target write,
        RouteStatus status,
        long epoch,
        long token,
        long updatedMs,
        double shadowSample) {
    /** The entry's field holding {@link #shadowSample}. */
    static final String SHADOW_SAMPLE = "shadow_sample";

    static Route of(String scope, Map<String, String> h) {
        return new Route(
                scope,
                Target.ofWire(h.get("read")),
                Target.ofWire(h.get("write")),
                RouteStatus.valueOf(h.get("status")),
                Long.parseLong(h.getOrDefault("epoch", "0")),
                Long.parseLong(h.getOrDefault("token", "0")),
                Long.parseLong(h.getOrDefault("updated_ms", "0")),
                Double.parseDouble(h.getOrDefault(SHADOW_SAMPLE, "0")));
    }
}
