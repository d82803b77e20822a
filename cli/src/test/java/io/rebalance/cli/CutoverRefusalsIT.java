package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.retry.Retrier;
import io.rebalance.core.slot.Slot;
import io.rebalance.mover.RunKeys;
import io.rebalance.mover.RunState;
import io.rebalance.mover.SlotStore;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * The cutover refuses while something could still write what verification did not see: a copy process alive, a
 * slot lease held (a worker that died may have a write in flight until it lapses), and a TRUNCATE newer than a slot's
 * last verification (the tail does not apply it, so every slot's items are still there). Each refusal lifts once
 * its cause is gone: the process leaves, the lease lapses, every slot is verified (and repaired) after the TRUNCATE.
 */
class CutoverRefusalsIT {
    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("cutref");
    private final String prefix = SharedServices.unique("cr") + ":";

    @Test
    void refusedWhileACopyCanWriteAndAfterATruncateUntilReverified() throws Exception {
        Map<String, String> settings = TailedTable.settings(services, table, prefix);
        settings.put("mover.leaseTtl", "2s");
        List<String> flags = TailedTable.args(settings);
        try (TailedTable t = new TailedTable(services, table, settings, 600, 17)) {
            assertThat(CliRun.of(flags, "cutover", "--prepare").exitCode()).isZero();
            assertThat(CliRun.of(flags, "copy", "--no-progress").exitCode()).isZero();
            assertThat(CliRun.of(flags, "verify", "--all").exitCode()).isZero();
            awaitDryRun(flags, 0, "ok     copy processes: none runs, no slot lease is held");

            RunState run = new RunState(t.redis, new RunKeys(prefix), Retrier.standard());
            run.heartbeat("host-a:123", "{\"host\":\"host-a\",\"pid\":123,\"slots\":[]}");
            CliRun alive = CliRun.of(flags, "cutover", "--dry-run");
            assertThat(alive.exitCode()).as(alive.out()).isEqualTo(31);
            assertThat(alive.out()).contains("FAILED copy processes: 1 copy process runs (host-a:123)");
            run.leave("host-a:123");

            SlotStore slots =
                    new SlotStore(t.redis, run.keys(), Retrier.standard(), Duration.ofSeconds(2), Duration.ofDays(1));
            Slot slot = run.plan().range().newest();
            slots.acquire(slot, "dead-worker"); // as a worker that died holding it would leave it
            CliRun leased = CliRun.of(flags, "cutover", "--dry-run");
            assertThat(leased.exitCode()).as(leased.out()).isEqualTo(31);
            assertThat(leased.out()).contains("FAILED copy processes: 1 slot lease is still held");
            awaitDryRun(flags, 0, "ok     copy processes"); // it lapses within mover.leaseTtl

            sql("TRUNCATE " + table);
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> t.redis.hget(prefix + "cdc:changed", "truncated") != null);
            CliRun truncated = CliRun.of(flags, "cutover", "--dry-run");
            assertThat(truncated.exitCode()).as(truncated.out()).isEqualTo(31);
            assertThat(truncated.out())
                    .contains("verified before the TRUNCATE at")
                    .contains("--repair");

            CliRun repaired = CliRun.of(flags, "verify", "--all", "--repair");
            assertThat(repaired.exitCode()).as(repaired.out()).isZero();
            awaitDryRun(flags, 0, "all pre-checks pass");
        }
    }

    private static void awaitDryRun(List<String> flags, int code, String text) {
        Awaitility.await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            CliRun dry = CliRun.of(flags, "cutover", "--dry-run");
            assertThat(dry.exitCode()).as(dry.out()).isEqualTo(code);
            assertThat(dry.out()).contains(text);
        });
    }

    private void sql(String statement) throws Exception {
        try (Connection pg = services.postgres();
                Statement st = pg.createStatement()) {
            st.execute(statement);
        }
    }
}
