package io.rebalance.bench;

import io.rebalance.sim.CutoverCycles;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/** The steps the cutover benchmarks share: a command that must succeed, and a wait for a condition. */
final class BenchSteps {
    private BenchSteps() {}

    interface Condition {
        boolean holds() throws Exception;
    }

    /** {@code settings} as the {@code --set key=value} flags of the commands the benchmark runs. */
    static List<String> flags(Map<String, String> settings) {
        List<String> flags = new ArrayList<>();
        settings.forEach((k, v) -> {
            flags.add("--set");
            flags.add(k + "=" + v);
        });
        return flags;
    }

    /** @throws IllegalStateException with the command's output when it failed */
    static void check(CutoverCycles.Command c) {
        if (c.exitCode() != 0) throw new IllegalStateException("command failed (" + c.exitCode() + "):\n" + c.output());
    }

    /** Polls {@code c} until it holds. @throws IllegalStateException after 120 s */
    static void until(Condition c) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!c.holds()) {
            if (System.nanoTime() > deadline) throw new IllegalStateException("gave up waiting after 120 s");
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200)); // a slot or a pre-check settling
        }
    }
}
