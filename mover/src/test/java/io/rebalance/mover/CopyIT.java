package io.rebalance.mover;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.testkit.RedisKeys;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class CopyIT {
    @Test
    void twoProcessesCopyEveryRowExactlyAndCompactTheirState() throws Exception {
        try (MoverFixture f = new MoverFixture()
                .generate(20_000, 40)
                .set("mover.workers", "3")
                .set("mover.pageSize", "200")) {
            MoverProcess a = f.process(PhaseHooks.NONE, List.of());
            MoverProcess b = f.process(PhaseHooks.NONE, List.of());
            var ra = f.start(a);
            var rb = f.start(b);
            assertThat(ra.get(120, TimeUnit.SECONDS)).isEqualTo(RunStatus.FINISHED);
            assertThat(rb.get(30, TimeUnit.SECONDS)).isEqualTo(RunStatus.FINISHED);

            assertThat(f.differences()).isEmpty();
            RunState run = f.runState();
            assertThat(run.rowsCopied()).isEqualTo(20_000);
            assertThat(run.watermark().name()).isEqualTo(run.plan().oldest());
            // both processes did work: the slots were shared, not copied twice
            assertThat(a.counters().rowsWritten() + b.counters().rowsWritten()).isEqualTo(20_000);
            assertThat(a.counters().rowsWritten()).isPositive();
            assertThat(b.counters().rowsWritten()).isPositive();
            List<String> keys = RedisKeys.withPrefix(f.redis(), f.prefix);
            assertThat(keys).noneMatch(k -> k.contains("{")); // every per-slot key was compacted away
            assertThat(keys.size()).isLessThan(15);
        }
    }
}
