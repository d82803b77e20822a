package io.rebalance.cutover;

import static io.rebalance.cutover.CutoverStep.ACQUIRE;
import static io.rebalance.cutover.CutoverStep.CLOSE_WINDOW;
import static io.rebalance.cutover.CutoverStep.RELEASE;

import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.handoff.BypassedWrites;
import io.rebalance.protocol.route.Route;
import io.rebalance.protocol.route.RouteStatus;
import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * {@code rebalance cutover --close-window}: the route becomes FINAL, the reverse stream stops, rollback is refused.
 * Not while a write that bypassed the Postgres fence is unreconciled: Postgres took it, DynamoDB never got it, and
 * after the window only a rollback could still carry it over. A key whose row and item are equal now is reconciled
 * (written again through the application, or undone in Postgres) and dropped from the record.
 */
final class CloseWindow {
    static final String WINDOW_CLOSED = "DynamoDB is the store of record; rollback is no longer possible";
    /** Keys named in a refusal; the rest are counted. */
    private static final int NAMED = 20;
    /** How long comparing the bypassing writes' keys may take: up to 100,000 keys, read in parallel. */
    private static final Duration COMPARE_WITHIN = Duration.ofMinutes(10);

    private final Cutover c;
    private final WindowClosing closing;
    private Route route;

    CloseWindow(Cutover c, WindowClosing closing) {
        this.c = c;
        this.closing = closing;
    }

    List<Step> steps() {
        return List.of(
                Step.of(ACQUIRE, run -> run.acquire(false)),
                Step.of(CLOSE_WINDOW, run -> c.flip(run, route, RouteStatus.FINAL)),
                Step.of(RELEASE, Step.BY_DONE));
    }

    CutoverOutcome run() throws Exception {
        route = c.startFrom(RouteStatus.TARGET, "close-window");
        refuseUnreconciled();
        try (CommandRun run = c.run("close-window")) {
            c.journal.begin(run.op, c.owner);
            try {
                run.perform(steps());
                c.dropWriteLog();
                return run.done(WINDOW_CLOSED);
            } catch (Exception e) {
                return c.failure.settle(run, RouteStatus.TARGET, RouteStatus.FINAL, e, WINDOW_CLOSED);
            }
        }
    }

    /** Compares the keys of writes that bypassed the fence, drops the equal ones, and refuses over any other. */
    private void refuseUnreconciled() throws Exception {
        Optional<String> behind = closing.awaitTail();
        if (behind.isPresent()) {
            throw new RebalanceException(
                    ErrorCode.CUTOVER_REFUSED,
                    "the window stays open: " + behind.get() + ", so a write that bypassed the Postgres fence might"
                            + " not be recorded yet, and closing the window would lose it. Start `rebalance tail`, or"
                            + " wait for it to catch up (`rebalance status`), then run --close-window again. Nothing"
                            + " was changed.");
        }
        BypassedWrites.Summary found = c.bypassed.read();
        if (found.isEmpty()) return;
        Set<String> differing = new HashSet<>();
        if (!found.keys().isEmpty()) {
            DrainProof proof = closing.proof();
            try {
                // before the lease: nothing is blocked while it compares, so no write-block budget bounds it
                Collection<String> d = proof.differing(Optional.of(found.keys().keySet()), COMPARE_WITHIN);
                differing.addAll(d);
            } finally {
                if (proof instanceof AutoCloseable closeable) closeable.close();
            }
        }
        Map<String, Long> equal = new LinkedHashMap<>(found.keys());
        equal.keySet().removeAll(differing);
        c.bypassed.settle(equal);
        if (differing.isEmpty() && found.overflow() == 0) return;
        List<String> named = differing.stream().sorted().limit(NAMED).toList();
        throw new RebalanceException(
                ErrorCode.CUTOVER_REFUSED,
                "the window stays open: "
                        + (differing.isEmpty()
                                ? ""
                                : differing.size() + " key(s) written to Postgres past its fence while the route was"
                                        + " TARGET differ from DynamoDB (" + String.join(", ", named)
                                        + (differing.size() > NAMED ? ", ..." : "") + ")")
                        + (found.overflow() == 0
                                ? ""
                                : (differing.isEmpty() ? "" : ", and ") + found.overflow() + " more such changes whose"
                                        + " keys were not kept (past the " + BypassedWrites.CAP + " kept, or a"
                                        + " TRUNCATE)")
                        + ". Postgres took them and DynamoDB never got them, so closing the window would lose them."
                        + " Roll back (`rebalance cutover --rollback`: the tail then writes them to DynamoDB), or make"
                        + " both stores agree on each key (write it again through the application), then run"
                        + " --close-window again; `rebalance status` lists them (docs/cutover.md, \"Writes that bypass"
                        + " the fence\"). Nothing was changed.");
    }
}
