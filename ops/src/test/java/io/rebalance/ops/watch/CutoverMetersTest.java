package io.rebalance.ops.watch;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.rebalance.cutover.CutoverHooks;
import io.rebalance.cutover.CutoverOutcome;
import io.rebalance.cutover.CutoverStep;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CutoverMetersTest {
    @Test
    void stepsShowAsTheyEndAndTheOutcomeSetsThemExactly() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        List<CutoverStep> seen = new ArrayList<>();
        CutoverMeters meters = new CutoverMeters(registry, seen::add);
        meters.before(CutoverStep.PRECHECK);
        meters.before(CutoverStep.FLIP); // PRECHECK ended: its gauge is there while the command still runs
        assertThat(seen).containsExactly(CutoverStep.PRECHECK, CutoverStep.FLIP); // the inner hooks still run
        assertThat(registry.find("rebalance.cutover.step.seconds")
                        .tag("step", "PRECHECK")
                        .gauge())
                .isNotNull();
        Map<CutoverStep, Long> steps = new LinkedHashMap<>();
        steps.put(CutoverStep.PRECHECK, 1500L);
        steps.put(CutoverStep.FLIP, 230L);
        meters.done(new CutoverOutcome("cutover", 7, 640, steps, ""));
        assertThat(registry.get("rebalance.cutover.step.seconds")
                        .tag("step", "FLIP")
                        .gauge()
                        .value())
                .isEqualTo(0.23);
        assertThat(registry.get("rebalance.cutover.step.seconds")
                        .tag("step", "PRECHECK")
                        .gauge()
                        .value())
                .isEqualTo(1.5);
        assertThat(registry.get("rebalance.cutover.write.blocked.seconds")
                        .gauge()
                        .value())
                .isEqualTo(0.64);
    }

    @Test
    void withoutAnEndpointTheHooksAreTheCommandsOwn() {
        CutoverHooks mine = step -> {};
        assertThat(Watch.off().cutover(mine, null)).isSameAs(mine);
    }
}
