package io.rebalance.mover;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.copy.RunStatus;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A page that takes longer to write than the lease lasts (a low rate limit) must not lose the lease: the worker
 * renews it while writing. Before that, every owner lost the slot mid-page, its progress save was refused, and the
 * slot never finished.
 */
class SlowPageIT {
    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void aPageSlowerThanTheLeaseStillCompletesWithoutLosingTheLease(String coordinator) throws Exception {
        try (MoverFixture f = MoverFixture.coordinatedBy(coordinator)
                .generate(1_800, 1)
                .set("mover.workers", "1")
                .set("mover.pageSize", "600")
                .set("mover.leaseTtl", "2s")
                .set("mover.rateLimit", "150")) { // 600 rows at 150 rows/s: 4 s per page, twice the lease
            MoverProcess p = f.process(PhaseHooks.NONE, List.of());
            assertThat(f.start(p).get(90, TimeUnit.SECONDS)).isEqualTo(RunStatus.FINISHED);
            assertThat(p.counters().leasesLost()).isZero();
            assertThat(f.runState().events(100)).noneMatch(e -> e.contains("lost-lease"));
            assertThat(f.differences()).isEmpty();
        }
    }
}
