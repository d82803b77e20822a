package io.rebalance.ops.watch;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The named checks behind {@code /health/live} and {@code /health/ready}: each answers up or down with a detail, and
 * an endpoint answers 200 when all of its checks are up, 503 otherwise, with a JSON body naming each. Checks read
 * state the process already holds or a {@link Refresher} keeps current: a probe never waits on a service.
 */
public final class Health {
    /** One check's answer. */
    public record Result(boolean up, String detail) {
        public static Result up(String detail) {
            return new Result(true, detail);
        }

        public static Result down(String detail) {
            return new Result(false, detail);
        }
    }

    /** What an endpoint answers: the HTTP status and its JSON body. */
    public record Answer(int status, Map<String, Object> body) {}

    private final Map<String, Supplier<Result>> live = new LinkedHashMap<>();
    private final Map<String, Supplier<Result>> ready = new LinkedHashMap<>();

    /** Adds a liveness check: down means the process is wedged and should be restarted. */
    public synchronized Health live(String name, Supplier<Result> check) {
        live.put(name, check);
        return this;
    }

    /** Adds a readiness check: down means the process cannot do its work now (or stands by), not that it is wedged. */
    public synchronized Health ready(String name, Supplier<Result> check) {
        ready.put(name, check);
        return this;
    }

    public Answer live() {
        return answer(snapshot(live));
    }

    public Answer ready() {
        return answer(snapshot(ready));
    }

    private synchronized Map<String, Supplier<Result>> snapshot(Map<String, Supplier<Result>> checks) {
        return new LinkedHashMap<>(checks);
    }

    private static Answer answer(Map<String, Supplier<Result>> checks) {
        boolean up = true;
        Map<String, Object> each = new LinkedHashMap<>();
        for (var e : checks.entrySet()) {
            Result r;
            try {
                r = e.getValue().get();
            } catch (RuntimeException failed) { // a check that throws is a check that is down, never a 500
                r = Result.down(failed.toString());
            }
            up &= r.up();
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("status", r.up() ? "UP" : "DOWN");
            one.put("detail", r.detail());
            each.put(e.getKey(), one);
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("status", up ? "UP" : "DOWN");
        body.put("checks", each);
        return new Answer(up ? 200 : 503, body);
    }
}
