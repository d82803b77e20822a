package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.cutover.AlignInstruction;
import io.rebalance.cutover.CutoverHooks;
import io.rebalance.cutover.CutoverStep;
import io.rebalance.protocol.fence.FenceWriter;
import io.rebalance.protocol.fence.PostgresFence;
import io.rebalance.protocol.lock.LockHolders;
import io.rebalance.protocol.lock.SharedExclusiveLock;
import io.rebalance.protocol.part.PartMap;
import io.rebalance.protocol.route.RouteStatus;
import io.rebalance.protocol.route.RoutingTable;
import io.rebalance.testkit.SharedServices;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * A cutover of one part killed before each instruction of its flip (no abort handler runs, its lease lapses, as when
 * the process dies): {@code cutover --recover --part} puts that part where its fences recorded it, and every other
 * part stays on SOURCE with its fences open to applications and its rows taking writes.
 */
class PartKilledIT {
    private static final String PARTS = "[{name: pilot, values: [1]}, {name: early, values: [2, 3]}, {name: rest}]";

    private final SharedServices services = SharedServices.get();
    private final String table = SharedServices.unique("partkill");
    private final String prefix = SharedServices.unique("pk") + ":";

    /** What the hook throws: an Error, so no abort handler runs, as when the process dies. */
    static final class Killed extends Error {
        Killed(AlignInstruction at) {
            super("killed before " + at);
        }
    }

    private List<String> args() {
        return TailedTable.args(PartedTables.settings(services, table, prefix, PARTS));
    }

    private CliRun ok(String... words) {
        CliRun r = CliRun.of(args(), words);
        assertThat(r.exitCode())
                .as(String.join(" ", words) + "\n" + r.out() + r.err())
                .isZero();
        return r;
    }

    @Test
    void aPartKilledInsideItsFlipIsRecoveredAloneAndTheOtherPartsNeverMove() throws Exception {
        try (TailedTable t = new TailedTable(
                services,
                table,
                PartedTables.settings(services, table, prefix, PARTS),
                pg -> PartedTables.make(pg, table))) {
            ok("cutover", "--prepare");
            ok("copy", "--no-progress");
            ok("verify", "--all");
            RoutingTable routes = new RoutingTable(t.redis, t.config.redis().keyspace());
            String pilot = PartMap.scope(table, "pilot");
            SharedExclusiveLock lock =
                    new SharedExclusiveLock(t.redis, t.config.redis().keyspace().scope(pilot));
            for (AlignInstruction at : AlignInstruction.FLIP) {
                Awaitility.await()
                        .atMost(Duration.ofSeconds(60))
                        .until(() -> CliRun.of(args(), "cutover", "--dry-run", "--part", "pilot")
                                        .exitCode()
                                == 0);
                killedBefore(at);
                Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> {
                    LockHolders h = lock.holders();
                    return h.exclusive() == null && h.pending() == null;
                });
                assertThat(ok("status").out()).contains("run `rebalance cutover --recover --part pilot`");
                ok("cutover", "--recover", "--part", "pilot");
                RouteStatus expected = at == AlignInstruction.OPEN_DYNAMO || at == AlignInstruction.SET_ROUTE
                        ? RouteStatus.TARGET // recorded on the Postgres fence: recovered forward
                        : RouteStatus.SOURCE;
                assertThat(routes.get(pilot).orElseThrow().status())
                        .as("the pilot after a flip killed before " + at)
                        .isEqualTo(expected);
                try (Connection pg = services.postgres();
                        Statement st = pg.createStatement()) {
                    PostgresFence fence = new PostgresFence(t.config.cutover().pgFence());
                    for (String other : List.of("early", "rest")) {
                        String scope = PartMap.scope(table, other);
                        assertThat(routes.get(scope).orElseThrow().status())
                                .as(scope)
                                .isEqualTo(RouteStatus.SOURCE);
                        assertThat(fence.find(pg, scope).orElseThrow().writer())
                                .as(scope)
                                .isEqualTo(FenceWriter.APP);
                    }
                    assertThat(st.executeUpdate("UPDATE " + table + " SET kind = '" + at + "' WHERE tenant_id IN (2, 9)"
                                    + " AND id = 1"))
                            .as("the other parts' rows take writes")
                            .isEqualTo(2);
                }
                if (expected == RouteStatus.TARGET) ok("cutover", "--rollback", "--part", "pilot");
            }
        }
    }

    /** Runs the pilot's cutover in this JVM and kills it before {@code at}. */
    private void killedBefore(AlignInstruction at) {
        List<String> args = new ArrayList<>(List.of("cutover", "--part", "pilot"));
        args.addAll(args());
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Throwable died = null;
        try {
            RebalanceCommand.execute(
                    args.toArray(String[]::new), new PrintStream(out), new PrintStream(out), new CutoverHooks() {
                        @Override
                        public void before(CutoverStep step) {}

                        @Override
                        public void inside(AlignInstruction instruction) {
                            if (instruction == at) throw new Killed(at);
                        }
                    });
        } catch (Killed e) {
            died = e;
        }
        assertThat(died).as("the cutover reached " + at + ": " + out).isNotNull();
    }
}
