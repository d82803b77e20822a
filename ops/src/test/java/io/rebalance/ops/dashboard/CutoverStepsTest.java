package io.rebalance.ops.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CutoverStepsTest {
    @Test
    void theLastCommandsStepsWithTheirDurations() {
        List<String> journal = List.of(
                "1000 cutover begun by a",
                "1010 cutover PRECHECK",
                "1500 cutover aborted: tail lag",
                "2000 rollback begun by b",
                "2000 rollback ACQUIRE",
                "2240 rollback note verified 3 slots",
                "2300 rollback FLIP_BACK epoch 4",
                "2500 rollback done");
        List<Map<String, Object>> steps = CutoverSteps.steps(journal, "rollback", 9_999);
        assertThat(steps).extracting(s -> s.get("step")).containsExactly("ACQUIRE", "FLIP_BACK");
        assertThat(steps).extracting(s -> s.get("ms")).containsExactly(240L, 200L);
    }

    @Test
    void aStepStillRunningCountsUpToNow() {
        List<Map<String, Object>> steps =
                CutoverSteps.steps(List.of("1000 cutover begun by a", "1200 cutover PRE_VERIFY"), "cutover", 5_200);
        assertThat(steps).extracting(s -> s.get("ms")).containsExactly(4_000L);
    }
}
