package io.rebalance.protocol.route;

import java.util.Map;

/**
 * One scope's routing entry.
 *
 * @param epoch how many times the entry was set (1 when created)
 * @param token the fencing token of the exclusive lease that set it last (0 when created)
 */
public record Route(
        String scope, Target read, Target write, RouteStatus status, long epoch, long token, long updatedMs) {
    static Route of(String scope, Map<String, String> h) {
        return new Route(
                scope,
                Target.ofWire(h.get("read")),
                Target.ofWire(h.get("write")),
                RouteStatus.valueOf(h.get("status")),
                Long.parseLong(h.getOrDefault("epoch", "0")),
                Long.parseLong(h.getOrDefault("token", "0")),
                Long.parseLong(h.getOrDefault("updated_ms", "0")));
    }
}
