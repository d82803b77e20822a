package io.rebalance.cutover;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.rebalance.cdc.ChangedSlots;
import io.rebalance.client.WriteGuard;
import io.rebalance.core.redis.RedisConnector;
import io.rebalance.core.source.SourceSession;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.fence.FenceState;
import io.rebalance.protocol.fence.FenceWriter;
import io.rebalance.protocol.fence.FencedException;
import io.rebalance.protocol.handoff.ForwardHold;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.lock.LockHolders;
import io.rebalance.protocol.route.Route;
import io.rebalance.protocol.route.RouteStatus;
import io.rebalance.protocol.route.Target;
import io.rebalance.testkit.TcpProxy;
import java.net.URI;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.Put;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItem;

/**
 * The cutover state machine against real Postgres, Redis, DynamoDB Local and a running tail: a cutover and a
 * rollback move every store together and carry writes both ways; pre-checks refuse with reasons; an abort before the
 * flip puts everything back; and a command killed at any named step leaves routing entirely old or entirely new,
 * its lease lapses, and the next command brings the stores in line.
 */
class CutoverIT {
    static final PreChecks PASS = () -> List.of(PreCheck.pass("test", "all good"));
    static final WindowVerification MATCH = budget -> new WindowVerification.Result(true, "no slot changed");
    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final AtomicInteger ids = new AtomicInteger();

    /** What a kill hook throws: an Error, so no abort handler runs, as when the process dies. */
    static final class Killed extends Error {
        Killed(CutoverStep step) {
            super("killed at " + step);
        }

        Killed(AlignInstruction instruction) {
            super("killed before " + instruction);
        }
    }

    @Test
    void aCutoverAndItsRollbackMoveEveryStoreTogetherAndCarryWritesBothWays() throws Exception {
        try (CutoverFixture f = new CutoverFixture();
                WriteGuard guard = f.guard()) {
            f.startTail();
            String before = write(f, guard);
            CutoverOutcome out = f.cutover("first").cutover(PASS, MATCH);
            assertThat(route(f).status()).isEqualTo(RouteStatus.TARGET);
            assertAligned(f, RouteStatus.TARGET, out.token());
            assertThat(item(f, before))
                    .as("written to Postgres before, in DynamoDB after")
                    .isNotEmpty();
            assertThat(out.stepMs().keySet())
                    .containsExactly(
                            CutoverStep.PRECHECK,
                            CutoverStep.PRE_VERIFY,
                            CutoverStep.ACQUIRE,
                            CutoverStep.CLOSE_SOURCE,
                            CutoverStep.NOTE_POSITION,
                            CutoverStep.AWAIT_TAIL,
                            CutoverStep.VERIFY,
                            CutoverStep.OPEN_TARGET,
                            CutoverStep.FLIP,
                            CutoverStep.RELEASE);
            assertThat(List.copyOf(out.stepMs().keySet()))
                    .as("the steps that ran are the list the dry run prints")
                    .isEqualTo(Cutover.CUTOVER_STEPS);
            assertThat(f.parts.journal().read().orElseThrow().status()).isEqualTo("done");

            ChangedSlots changed = new ChangedSlots(f.redis, new Keyspace(f.prefix).tail(), null);
            Map<String, Long> changedBefore = changed.positions().bySlot();
            long skippedBefore = skippedWhileHeld(f);
            String during = write(f, guard);
            assertThat(item(f, during)).as("written to DynamoDB").isNotEmpty();
            // the reverse stream carries it to Postgres, and the held tail skips that change: its slot still counts
            // as changed, so the next cutover verifies it again
            await().atMost(BOUND).until(() -> "guarded".equals(kind(f, during)) && skippedWhileHeld(f) > skippedBefore);
            await().atMost(BOUND)
                    .untilAsserted(() -> assertThat(changed.positions().bySlot())
                            .as("changed slots after a write the reverse stream carried back")
                            .isNotEqualTo(changedBefore));
            CutoverOutcome back = f.cutover("second").rollback(f.proof());
            assertThat(route(f).status()).isEqualTo(RouteStatus.SOURCE);
            assertThat(List.copyOf(back.stepMs().keySet())).isEqualTo(Cutover.ROLLBACK_STEPS);
            assertAligned(f, RouteStatus.SOURCE, back.token());
            assertThat(kind(f, during))
                    .as("written to DynamoDB, in Postgres after the rollback")
                    .isEqualTo("guarded");

            String after = write(f, guard);
            await().atMost(BOUND).until(() -> !item(f, after).isEmpty()); // the forward tail applies again
        }
    }

    @Test
    void failedPreChecksRefuseWithTheirReasonsAndChangeNothing() throws Exception {
        try (CutoverFixture f = new CutoverFixture()) {
            PreChecks failing = () -> List.of(
                    PreCheck.pass("copy", "FINISHED"),
                    PreCheck.fail("tail lag", "45 s is over cutover.maxTailLag 5 s; wait for the tail to catch up"));
            assertThatThrownBy(() -> f.cutover("c").cutover(failing, MATCH))
                    .isInstanceOf(RebalanceException.class)
                    .hasMessageContaining("tail lag: 45 s is over cutover.maxTailLag")
                    .hasMessageContaining("Nothing was changed")
                    .extracting(e -> ((RebalanceException) e).code())
                    .isEqualTo(ErrorCode.CUTOVER_REFUSED);
            assertThat(route(f).status()).isEqualTo(RouteStatus.SOURCE);
            assertThat(f.parts.alignment().postgres().writer()).isEqualTo(FenceWriter.APP);
            assertThat(f.parts.alignment().dynamo().writer()).isEqualTo(FenceWriter.NONE);
            assertThat(f.parts.lock().holders().exclusive()).isNull();
            assertThatThrownBy(() -> f.cutover("c").rollback(f.proof()))
                    .hasMessageContaining("nothing to rollback; run `rebalance cutover` first");
        }
    }

    @Test
    void anAbortBeforeTheFlipPutsEverythingBackAndWritesResume() throws Exception {
        try (CutoverFixture f = new CutoverFixture();
                WriteGuard guard = f.guard()) {
            f.startTail();
            WindowVerification mismatch = budget -> new WindowVerification.Result(false, "slot 20241020.02: 1 missing");
            assertThatThrownBy(() -> f.cutover("a").cutover(PASS, mismatch))
                    .isInstanceOf(RebalanceException.class)
                    .hasMessageContaining("aborted at step VERIFY")
                    .hasMessageContaining("slot 20241020.02: 1 missing")
                    .extracting(e -> ((RebalanceException) e).code())
                    .isEqualTo(ErrorCode.CUTOVER_ABORTED);
            assertAligned(f, RouteStatus.SOURCE, 0);
            assertThat(f.parts.lock().holders().exclusive()).isNull();
            assertThat(f.parts.journal().read().orElseThrow().status()).isEqualTo("aborted");
            String id = write(f, guard);
            await().atMost(BOUND).until(() -> !item(f, id).isEmpty());

            // a verification that outlasts --max-write-block aborts too
            Cutover tight = new CutoverParts(
                            f.parts.settings().withMaxWriteBlock(Duration.ofMillis(800)),
                            f.redis,
                            new Keyspace(f.prefix),
                            new io.rebalance.core.source.SourceSession(
                                    f.config().source()),
                            f.dynamo,
                            f.pgFence,
                            f.dynamoFence)
                    .cutover("tight");
            WindowVerification slow = budget -> { // a verification that outlasts what is left of the budget
                long end = System.nanoTime() + budget.plusMillis(50).toNanos();
                await().atMost(BOUND).until(() -> System.nanoTime() >= end);
                return new WindowVerification.Result(true, "");
            };
            assertThatThrownBy(() -> tight.cutover(PASS, slow))
                    .hasMessageContaining("the most --max-write-block (800 ms) allows");
            assertAligned(f, RouteStatus.SOURCE, 0);
        }
    }

    @Test
    void killedAtEveryNamedStepRoutingIsWholeLocksLapseAndTheNextCommandCleansUp() throws Exception {
        List<CutoverStep> forward = Cutover.CUTOVER_STEPS;
        List<CutoverStep> rollback = Cutover.ROLLBACK_STEPS;
        try (CutoverFixture f = new CutoverFixture();
                WriteGuard guard = f.guard()) {
            f.startTail();
            for (CutoverStep step : forward) {
                Cutover killed = f.cutover("killed-" + step).hooks(killAt(step));
                assertThatThrownBy(() -> killed.cutover(PASS, MATCH)).isInstanceOf(Killed.class);
                RouteStatus expected = step == CutoverStep.RELEASE ? RouteStatus.TARGET : RouteStatus.SOURCE;
                assertWhole(f, expected);
                awaitLockFree(f);
                assertThat(f.cutover("status").interrupted())
                        .as("interrupted at " + step)
                        .isPresent();
                // OPEN_TARGET recorded the flip on the fences: a command killed after it is recovered forward
                boolean recorded = step == CutoverStep.FLIP || step == CutoverStep.RELEASE;
                if (!recorded) {
                    // the next cutover recovers first, then runs to the end
                    f.cutover("next").cutover(PASS, MATCH);
                } else {
                    f.cutover("next").recover();
                }
                assertAligned(f, RouteStatus.TARGET, 0);
                assertThat(item(f, write(f, guard))).as("a write after " + step).isNotEmpty();
                f.cutover("back").rollback(f.proof());
                assertAligned(f, RouteStatus.SOURCE, 0);
            }
            for (CutoverStep step : rollback) {
                f.cutover("forward").cutover(PASS, MATCH);
                String during = write(f, guard);
                Cutover killed = f.cutover("killed-rollback-" + step).hooks(killAt(step));
                assertThatThrownBy(() -> killed.rollback(f.proof())).isInstanceOf(Killed.class);
                RouteStatus expected = step == CutoverStep.RELEASE ? RouteStatus.SOURCE : RouteStatus.TARGET;
                assertWhole(f, expected);
                awaitLockFree(f);
                assertThat(f.cutover("status").interrupted())
                        .as("interrupted at " + step)
                        .isPresent();
                f.cutover("next").recover();
                assertAligned(f, expected, 0);
                if (expected == RouteStatus.TARGET) f.cutover("back").rollback(f.proof());
                assertAligned(f, RouteStatus.SOURCE, 0);
                assertThat(kind(f, during))
                        .as("a DynamoDB write around a rollback killed at " + step)
                        .isEqualTo("guarded");
                String after = write(f, guard);
                await().atMost(BOUND).until(() -> !item(f, after).isEmpty());
            }
        }
    }

    /**
     * An abort or a recovery may die between any two of its store moves. Whatever prefix of them ran, a write the
     * stores accept is never lost: towards SOURCE it reaches DynamoDB through the tail (a tail still held would skip
     * it and confirm the WAL past it), towards TARGET it reaches Postgres through the reverse stream. A write the
     * fences refuse is the application's to retry; the next command recovers.
     */
    @Test
    void killedAtEveryInstructionOfAnAbortOrARecoveryNoAcceptedWriteIsLost() throws Exception {
        WindowVerification mismatch = budget -> new WindowVerification.Result(false, "slot 20241020.02: 1 missing");
        try (CutoverFixture f = new CutoverFixture();
                WriteGuard guard = f.guard()) {
            f.startTail();
            for (AlignInstruction at : AlignInstruction.TO_SOURCE) {
                Cutover aborting = f.cutover("abort-" + at).hooks(killInside(at));
                assertThatThrownBy(() -> aborting.cutover(PASS, mismatch)).isInstanceOf(Killed.class);
                awaitLockFree(f);
                acceptedWritesArrive(f, guard, RouteStatus.SOURCE, "after an abort killed before " + at);
                f.cutover("recover").recover();
                assertAligned(f, RouteStatus.SOURCE, 0);

                Cutover dies = f.cutover("dies-" + at).hooks(killAt(CutoverStep.VERIFY)); // leaves the tail held
                assertThatThrownBy(() -> dies.cutover(PASS, MATCH)).isInstanceOf(Killed.class);
                awaitLockFree(f);
                Cutover recovering = f.cutover("recover-" + at).hooks(killInside(at));
                assertThatThrownBy(recovering::recover).isInstanceOf(Killed.class);
                awaitLockFree(f);
                acceptedWritesArrive(f, guard, RouteStatus.SOURCE, "after a recovery killed before " + at);
                f.cutover("recover").recover();
                assertAligned(f, RouteStatus.SOURCE, 0);
                acceptedWritesArrive(f, guard, RouteStatus.SOURCE, "once recovered from " + at);
            }
            for (AlignInstruction at : AlignInstruction.TO_TARGET) {
                f.cutover("forward").cutover(PASS, MATCH);
                Cutover dies = f.cutover("rollback-dies-" + at).hooks(killAt(CutoverStep.LIFT_HOLD));
                assertThatThrownBy(() -> dies.rollback(f.proof())).isInstanceOf(Killed.class);
                awaitLockFree(f);
                Cutover recovering = f.cutover("recover-" + at).hooks(killInside(at));
                assertThatThrownBy(recovering::recover).isInstanceOf(Killed.class);
                awaitLockFree(f);
                acceptedWritesArrive(f, guard, RouteStatus.TARGET, "after a recovery killed before " + at);
                f.cutover("recover").recover();
                assertAligned(f, RouteStatus.TARGET, 0);
                acceptedWritesArrive(f, guard, RouteStatus.TARGET, "once recovered from " + at);
                f.cutover("back").rollback(f.proof());
                assertAligned(f, RouteStatus.SOURCE, 0);
            }
        }
    }

    /**
     * Killed before each instruction of a flip (the log of written keys begun, the route recorded on the Postgres
     * fence, the DynamoDB fence opened with its record, the route set in Redis; back to Postgres, the DynamoDB fence's
     * record after writes resumed), either way: recovery follows the route the fences recorded, every write a store
     * accepts after it reaches the other store, and a rollback from a flip recovered this way proves its drain with
     * the log that flip began (ADR 9).
     */
    @Test
    void killedInsideEveryFlipRecoveryFollowsTheFencesAndNoAcceptedWriteIsLost() throws Exception {
        try (CutoverFixture f = new CutoverFixture();
                WriteGuard guard = f.guard()) {
            f.startTail();
            for (AlignInstruction at : AlignInstruction.FLIP) {
                Cutover dies = f.cutover("flip-dies-" + at).hooks(killInside(at));
                assertThatThrownBy(() -> dies.cutover(PASS, MATCH)).isInstanceOf(Killed.class);
                awaitLockFree(f);
                f.cutover("recover").recover();
                RouteStatus now = route(f).status();
                assertThat(now)
                        .as("the route after a flip to DynamoDB killed before " + at)
                        .isEqualTo(
                                at == AlignInstruction.OPEN_DYNAMO || at == AlignInstruction.SET_ROUTE
                                        ? RouteStatus.TARGET // recorded on the Postgres fence: recovered forward
                                        : RouteStatus.SOURCE);
                assertAligned(f, now, 0);
                acceptedWritesArrive(f, guard, now, "after a flip killed before " + at);
                if (now == RouteStatus.TARGET) {
                    String during = write(f, guard);
                    CutoverOutcome back = f.cutover("back-" + at).rollback(f.proof());
                    assertThat(back.detail()).contains("keys written to DynamoDB since the flip equal in Postgres");
                    assertThat(kind(f, during)).isEqualTo("guarded");
                }
            }
            for (AlignInstruction at : AlignInstruction.FLIP_BACK) {
                f.cutover("forward-" + at).cutover(PASS, MATCH);
                String during = write(f, guard);
                Cutover dies = f.cutover("back-dies-" + at).hooks(killInside(at));
                assertThatThrownBy(() -> dies.rollback(f.proof())).isInstanceOf(Killed.class);
                awaitLockFree(f);
                if (at == AlignInstruction.RECORD_ON_DYNAMO) {
                    // killed once writes resumed: the window never wrote the DynamoDB fence, whose record of the
                    // flip to TARGET is older than the Postgres fence's, which decides
                    FenceState pg = f.parts.alignment().postgres();
                    FenceState dynamo = f.parts.alignment().dynamo();
                    assertThat(pg.route()).isEqualTo(RouteStatus.SOURCE);
                    assertThat(dynamo.route()).isEqualTo(RouteStatus.TARGET);
                    assertThat(dynamo.epoch()).isLessThan(pg.epoch());
                    assertThat(f.parts.alignment().fenced().orElseThrow().status())
                            .isEqualTo(RouteStatus.SOURCE);
                }
                f.cutover("recover").recover();
                RouteStatus now = route(f).status();
                assertThat(now)
                        .as("the route after a flip back killed before " + at)
                        .isEqualTo(at == AlignInstruction.RECORD_ROUTE ? RouteStatus.TARGET : RouteStatus.SOURCE);
                assertAligned(f, now, 0);
                acceptedWritesArrive(f, guard, now, "after a flip back killed before " + at);
                if (now == RouteStatus.TARGET) {
                    f.cutover("back-" + at).rollback(f.proof());
                    // a rollback that ran to its end recorded the route on the DynamoDB fence too, once writes resumed
                    FenceState pg = f.parts.alignment().postgres();
                    FenceState dynamo = f.parts.alignment().dynamo();
                    assertThat(dynamo.route()).isEqualTo(RouteStatus.SOURCE);
                    assertThat(dynamo.epoch()).isEqualTo(pg.epoch());
                }
                assertThat(kind(f, during))
                        .as("written to DynamoDB before a flip back killed before " + at)
                        .isEqualTo("guarded");
            }
        }
    }

    /**
     * OPEN_TARGET recorded the flip on the Postgres fence and then the DynamoDB fence could not be written (here its
     * item is gone), nor closed again by the abort: the abort records SOURCE on the Postgres fence before anything
     * else, so the fences give back the route the command says it left, and the recovery goes back to SOURCE rather
     * than finishing a cutover that was given up.
     */
    @Test
    void anAbortThatCannotReachTheDynamoFenceStillLeavesTheFencesSayingSource() throws Exception {
        try (CutoverFixture f = new CutoverFixture();
                WriteGuard guard = f.guard()) {
            f.startTail();
            Map<String, AttributeValue> fenceKey = Map.of("scope", AttributeValue.fromS(f.table));
            Cutover failing = f.cutover("failing").hooks(new CutoverHooks() {
                @Override
                public void before(CutoverStep step) {}

                @Override
                public void inside(AlignInstruction at) {
                    if (at == AlignInstruction.OPEN_DYNAMO)
                        f.dynamo.deleteItem(b -> b.tableName(f.dynamoFence).key(fenceKey));
                }
            });
            assertThatThrownBy(() -> failing.cutover(PASS, MATCH))
                    .isInstanceOf(RebalanceException.class)
                    .satisfies(
                            e -> assertThat(((RebalanceException) e).code()).isEqualTo(ErrorCode.CUTOVER_INTERRUPTED));
            FenceState pg = f.parts.alignment().postgres();
            assertThat(pg.route()).as("the Postgres fence's newest record").isEqualTo(RouteStatus.SOURCE);
            assertThat(route(f).status()).isEqualTo(RouteStatus.SOURCE);
            // DynamoDB's fence installed again (at its first epoch), as `--prepare` would once DynamoDB answers
            new io.rebalance.protocol.fence.DynamoFence(f.dynamo, f.dynamoFence).install(f.table);
            assertThat(f.parts.alignment().fenced().orElseThrow().status()).isEqualTo(RouteStatus.SOURCE);
            f.cutover("recover").recover();
            assertThat(route(f).status()).isEqualTo(RouteStatus.SOURCE);
            assertAligned(f, RouteStatus.SOURCE, 0);
            acceptedWritesArrive(f, guard, RouteStatus.SOURCE, "after the abort that could not reach DynamoDB");
        }
    }

    /**
     * The flip ran in Redis but its reply was lost (the connection dropped right after the request): the command
     * reads the route again and finishes as what it is, so the stores end aligned to the route. Before, it aborted
     * as if the route had not changed, set the fences for the old route, and said "Routing is unchanged".
     */
    @Test
    void aFlipWhoseReplyIsLostEndsWithTheStoresAlignedToTheRoute() throws Exception {
        try (CutoverFixture f = new CutoverFixture();
                WriteGuard guard = f.guard();
                TcpProxy proxy = new TcpProxy(
                        "127.0.0.1", URI.create(f.services.redisUrl).getPort());
                UnifiedJedis viaProxy = RedisConnector.connect("redis://127.0.0.1:" + proxy.port(), 4)) {
            f.startTail();
            String routeKey = new Keyspace(f.prefix).scope(f.table).route();
            CutoverHooks loseTheFlipsReply = step -> {
                if (step == CutoverStep.FLIP || step == CutoverStep.FLIP_BACK) proxy.dropReplyTo(routeKey);
            };
            CutoverParts lossy = new CutoverParts(
                    f.parts.settings(),
                    viaProxy,
                    new Keyspace(f.prefix),
                    new SourceSession(f.config().source()),
                    f.dynamo,
                    f.pgFence,
                    f.dynamoFence);

            CutoverOutcome out = lossy.cutover("lossy").hooks(loseTheFlipsReply).cutover(PASS, MATCH);
            assertThat(proxy.replyDropPending())
                    .as("the flip's reply was dropped")
                    .isFalse();
            assertThat(out.detail()).contains("the flip's reply was lost");
            assertWhole(f, RouteStatus.TARGET);
            assertAligned(f, RouteStatus.TARGET, 0);
            assertThat(f.parts.journal().read().orElseThrow().status()).isEqualTo("done");
            String during = write(f, guard);
            assertThat(item(f, during)).as("a write after the flip").isNotEmpty();

            CutoverOutcome back =
                    lossy.cutover("lossy-back").hooks(loseTheFlipsReply).rollback(f.proof());
            assertThat(proxy.replyDropPending())
                    .as("the flip back's reply was dropped")
                    .isFalse();
            assertThat(back.detail()).contains("the flip's reply was lost");
            assertWhole(f, RouteStatus.SOURCE);
            assertAligned(f, RouteStatus.SOURCE, 0);
            assertThat(kind(f, during))
                    .as("the write made under TARGET, in Postgres")
                    .isEqualTo("guarded");
            String after = write(f, guard);
            await().atMost(BOUND).until(() -> !item(f, after).isEmpty());
        }
    }

    /** A guarded write: refused by a fence, or accepted and then in the other store too. */
    static void acceptedWritesArrive(CutoverFixture f, WriteGuard guard, RouteStatus route, String when)
            throws Exception {
        String id;
        try {
            id = write(f, guard);
        } catch (FencedException refused) {
            return; // not acknowledged: the application retries it
        }
        if (route == RouteStatus.SOURCE) {
            await().atMost(BOUND).untilAsserted(() -> assertThat(item(f, id))
                    .as("a write Postgres accepted " + when + " is in DynamoDB")
                    .isNotEmpty());
        } else {
            await().atMost(BOUND).untilAsserted(() -> assertThat(kind(f, id))
                    .as("a write DynamoDB accepted " + when + " is in Postgres")
                    .isEqualTo("guarded"));
        }
    }

    private static CutoverHooks killInside(AlignInstruction at) {
        return new CutoverHooks() {
            @Override
            public void before(CutoverStep step) {}

            @Override
            public void inside(AlignInstruction instruction) {
                if (instruction == at) throw new Killed(instruction);
            }
        };
    }

    static long skippedWhileHeld(CutoverFixture f) {
        String n = f.redis.hget(new Keyspace(f.prefix).tail().status(), "skipped_while_held");
        return n == null ? 0 : Long.parseLong(n);
    }

    static CutoverHooks killAt(CutoverStep at) {
        return step -> {
            if (step == at) throw new Killed(step);
        };
    }

    static Route route(CutoverFixture f) {
        return f.parts.routes().get(f.table).orElseThrow();
    }

    /** Routing is never half-switched: the status is the expected one and reads follow writes. */
    private static void assertWhole(CutoverFixture f, RouteStatus expected) {
        Route r = route(f);
        assertThat(r.status()).isEqualTo(expected);
        assertThat(r.read()).isEqualTo(r.write());
        assertThat(r.write()).isEqualTo(expected == RouteStatus.SOURCE ? Target.POSTGRES : Target.DYNAMODB);
    }

    static void awaitLockFree(CutoverFixture f) {
        await().atMost(CutoverFixture.LEASE.multipliedBy(5)).until(() -> {
            LockHolders h = f.parts.lock().holders();
            return h.exclusive() == null && h.pending() == null;
        });
    }

    /** The fences and the forward hold as the route needs them; {@code token} 0: any token. */
    static void assertAligned(CutoverFixture f, RouteStatus route, long token) throws Exception {
        FenceState pg = f.parts.alignment().postgres();
        FenceState dynamo = f.parts.alignment().dynamo();
        ForwardHold.Phase hold = f.parts.hold().state().phase();
        if (route == RouteStatus.SOURCE) {
            assertThat(pg.writer()).isEqualTo(FenceWriter.APP);
            assertThat(dynamo.writer()).isEqualTo(FenceWriter.NONE);
            assertThat(hold).isEqualTo(ForwardHold.Phase.NONE);
            if (token != 0) assertThat(pg.minToken()).isEqualTo(token);
        } else {
            assertThat(pg.writer()).isEqualTo(FenceWriter.REVERSE);
            assertThat(dynamo.writer()).isEqualTo(FenceWriter.APP);
            assertThat(hold).isEqualTo(ForwardHold.Phase.HELD);
            if (token != 0) assertThat(dynamo.minToken()).isEqualTo(token);
        }
    }

    /** One guarded application write to wherever the route says; @return its id. */
    static String write(CutoverFixture f, WriteGuard guard) throws Exception {
        // a ULID of 2024-10-20T02:00:01Z, so the id's slot is the item's _slot below
        String id = String.format("01JAKTE878%016d", ids.incrementAndGet());
        guard.run(f.table, permit -> {
            switch (permit.target()) {
                case POSTGRES -> {
                    try (Connection c = f.services.postgres()) {
                        c.setAutoCommit(false);
                        permit.fencePostgres(c);
                        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + f.table
                                + " VALUES (?, ?::uuid, 'guarded', '{\"n\": 1}'::jsonb, now(), 1)")) {
                            ps.setString(1, id);
                            ps.setString(2, UUID.randomUUID().toString());
                            ps.executeUpdate();
                        }
                        c.commit();
                    }
                }
                case DYNAMODB -> permit.writeDynamo(f.dynamo, guardedPut(f, id));
            }
        });
        return id;
    }

    /** The application's item for {@code id}; its slot attribute is the slot a ULID of 2024-10-20T02 gives. */
    static TransactWriteItem guardedPut(CutoverFixture f, String id) {
        return TransactWriteItem.builder()
                .put(Put.builder()
                        .tableName(f.table)
                        .item(Map.of(
                                "id", AttributeValue.fromS(id),
                                "room_id",
                                        AttributeValue.fromS(UUID.randomUUID().toString()),
                                "kind", AttributeValue.fromS("guarded"),
                                "data", AttributeValue.fromM(Map.of("n", AttributeValue.fromN("1"))),
                                "created_at", AttributeValue.fromS("2024-10-20T02:00:00.000000Z"),
                                "seq", AttributeValue.fromN("1"),
                                "_slot", AttributeValue.fromS("20241020.02")))
                        .build())
                .build();
    }

    static Map<String, AttributeValue> item(CutoverFixture f, String id) {
        return f.dynamo
                .getItem(b -> b.tableName(f.table)
                        .key(Map.of("id", AttributeValue.fromS(id)))
                        .consistentRead(true))
                .item();
    }

    static String kind(CutoverFixture f, String id) throws Exception {
        try (Connection c = f.services.postgres();
                PreparedStatement ps = c.prepareStatement("SELECT kind FROM " + f.table + " WHERE id = ?")) {
            ps.setString(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }
}
