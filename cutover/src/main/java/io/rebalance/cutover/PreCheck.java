package io.rebalance.cutover;

/**
 * One pre-check's result.
 *
 * @param detail what was seen, and when failed what to do, e.g. "tail lag 45 s is over cutover.maxTailLag 5 s; wait
 *     for `rebalance status` to show the tail caught up"
 */
public record PreCheck(String name, boolean passed, String detail) {
    public static PreCheck pass(String name, String detail) {
        return new PreCheck(name, true, detail);
    }

    public static PreCheck fail(String name, String detail) {
        return new PreCheck(name, false, detail);
    }

    @Override
    public String toString() {
        return (passed ? "ok    " : "FAILED") + " " + name + ": " + detail;
    }
}
