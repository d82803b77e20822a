package io.rebalance.mover;

import org.slf4j.Logger;

/**
 * Logs a repeating background failure once when it starts, once a minute while it lasts, and once when it ends,
 * instead of at every tick: during a 10 s coordinator outage the keeper would otherwise log thirty identical warnings.
 */
final class FailureStreak {
    private static final long REPEAT_MS = 60_000;

    private final Logger log;
    private final String what;
    private long since;
    private long lastLogged;
    private int failures;

    FailureStreak(Logger log, String what) {
        this.log = log;
        this.what = what;
    }

    synchronized void failed(Exception e) {
        long now = System.currentTimeMillis();
        if (failures++ == 0) {
            since = now;
            lastLogged = now;
            log.warn("{} failed: {}; retrying", what, e.toString());
        } else if (now - lastLogged >= REPEAT_MS) {
            lastLogged = now;
            log.warn(
                    "{} still failing after {} s ({} failures): {}",
                    what,
                    (now - since) / 1000,
                    failures,
                    e.toString());
        }
    }

    synchronized void succeeded() {
        if (failures > 0) {
            log.info(
                    "{} recovered after {} s ({} failures)",
                    what,
                    (System.currentTimeMillis() - since) / 1000,
                    failures);
            failures = 0;
        }
    }
}
