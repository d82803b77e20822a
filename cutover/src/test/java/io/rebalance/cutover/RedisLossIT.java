package io.rebalance.cutover;

import static io.rebalance.cutover.CutoverIT.MATCH;
import static io.rebalance.cutover.CutoverIT.PASS;
import static io.rebalance.cutover.CutoverIT.assertAligned;
import static io.rebalance.cutover.CutoverIT.awaitLockFree;
import static io.rebalance.cutover.CutoverIT.item;
import static io.rebalance.cutover.CutoverIT.kind;
import static io.rebalance.cutover.CutoverIT.route;
import static io.rebalance.cutover.CutoverIT.skippedWhileHeld;
import static io.rebalance.cutover.CutoverIT.write;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.rebalance.client.WriteGuard;
import io.rebalance.core.dynamo.DynamoClients;
import io.rebalance.core.redis.RedisConnector;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.fence.FencedException;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.route.Route;
import io.rebalance.protocol.route.RouteMissingException;
import io.rebalance.protocol.route.RouteStatus;
import io.rebalance.testkit.Paused;
import io.rebalance.testkit.PrivateRedis;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.exceptions.JedisConnectionException;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.TransactWriteItemsRequest;

/**
 * Redis restarted empty under a cutover (a real restart of a Redis the test starts without persistence, on its own
 * port): the route, the forward hold, the token counter, the journal and the tail's positions are gone, and the
 * fences are not. No acknowledged write may be lost in either store or accepted by the wrong one, and the next
 * command rebuilds the route from the fences, never from defaults (ADR 8).
 */
class RedisLossIT {
    private static final Duration BOUND = Duration.ofSeconds(60);

    /**
     * After the flip: the route was TARGET. Before, `--prepare` recreated it as SOURCE, sending writes back to a
     * Postgres that lacked the DynamoDB writes; the reverse stream found no hold, skipped the applications' records
     * and saved its position past them; and the forward tail, no longer held, could carry the reverse stream's rows
     * back over newer application writes.
     */
    @Test
    void redisRestartedEmptyAfterTheFlipLosesNoWriteAndPrepareRebuildsTheRouteFromTheFences() throws Exception {
        try (PrivateRedis redis = PrivateRedis.start("--appendonly", "no", "--save", "");
                CutoverFixture f = new CutoverFixture(redis.url);
                WriteGuard guard = f.guard()) {
            f.startTail();
            String before = write(f, guard);
            CutoverOutcome out = f.cutover("first").cutover(PASS, MATCH);
            Route flipped = route(f);
            String during = write(f, guard);
            assertThat(item(f, during)).as("acknowledged by DynamoDB").isNotEmpty();

            redis.restart();

            assertThatThrownBy(() -> afterReconnecting(() -> write(f, guard)))
                    .as("no route: nothing is written anywhere, and the message names the way out")
                    .isInstanceOf(RouteMissingException.class)
                    .hasMessageContaining("cutover --recover");
            List<String> prepared = f.parts.prepare(); // the fixture's client reconnected above
            assertThat(prepared).anySatisfy(line -> assertThat(line).contains("rebuilt from the fences"));
            Route rebuilt = route(f);
            assertThat(rebuilt.status()).isEqualTo(RouteStatus.TARGET);
            assertThat(rebuilt.epoch()).isEqualTo(flipped.epoch());

            f.startTailIfStopped();
            String status = new Keyspace(f.prefix).tail().status();
            await().atMost(BOUND).until(() -> f.redis.hget(status, "skipped_while_held") != null);
            long skippedBefore = skippedWhileHeld(f);
            String after = write(f, guard); // its token rose past the fences' high-water mark, or DynamoDB refuses it
            assertThat(item(f, after))
                    .as("acknowledged by DynamoDB after the rebuild")
                    .isNotEmpty();
            await().atMost(BOUND).untilAsserted(() -> assertThat(List.of(kind(f, during), kind(f, after)))
                    .as("written to DynamoDB before and after Redis came back empty, carried to Postgres")
                    .containsOnly("guarded"));
            await().atMost(BOUND).untilAsserted(() -> assertThat(skippedWhileHeld(f))
                    .as("the forward tail passed over the reverse stream's write of " + after + ": the"
                            + " Postgres fence held it, with no hold left in Redis")
                    .isGreaterThan(skippedBefore));

            // Redis lost the log of keys written to DynamoDB since the flip: the rollback starts it again and
            // compares every key before it blocks writes (ADR 12), without --verify-all
            CutoverOutcome back = f.cutover("back").rollback(f.proof(false));
            assertThat(back.detail())
                    .contains("the log of written keys was incomplete (")
                    .contains("every key of both stores compared before the window")
                    .contains("keys (written to DynamoDB since the log started again, or differing then) equal in"
                            + " Postgres");
            assertThat(back.token()).isGreaterThan(out.token());
            assertAligned(f, RouteStatus.SOURCE, back.token());
            assertThat(List.of(kind(f, before), kind(f, during), kind(f, after)))
                    .containsOnly("guarded");
            String again = write(f, guard);
            await().atMost(BOUND).until(() -> !item(f, again).isEmpty());
        }
    }

    /**
     * The failure the restarted log rests on (ADR 12): a write that logged its key in the old log, then stalled before
     * its request reached DynamoDB, while Redis restarted empty and lost that entry. The rollback starts the log again
     * and compares every key; the stalled request is released only after that comparison, when its key is in neither
     * the new log nor the comparison's differences. Its stream record would arrive two minutes late (AWS promises no
     * delivery time), so no reverse-stream round carries it unless the drain waits for it. Were the write
     * acknowledged, Postgres would reopen without it: it must be refused instead, by the fence the rollback raised past every token granted
     * before (the counter, reseeded from the fences after the loss, is below the tokens of the writes before it, so
     * it jumps first).
     */
    @Test
    void aWriteStalledBetweenItsLogAndItsSendAcrossTheLossIsFencedNotLost() throws Exception {
        try (PrivateRedis redis = PrivateRedis.start("--appendonly", "no", "--save", "");
                CutoverFixture f = new CutoverFixture(redis.url, Duration.ofSeconds(30));
                WriteGuard guard = f.guard()) {
            String stalled = "01JAKTE878" + "0000000000STALL1";
            f.startTail(dynamo -> new DelayedStreams(
                    DynamoClients.streamsOf(dynamo),
                    Duration.ofMinutes(2),
                    r -> stalled.equals(r.dynamodb().keys().get("id").s())));
            f.cutover("first").cutover(PASS, MATCH);
            List<String> acknowledged = new ArrayList<>();
            for (int i = 0; i < 20; i++) acknowledged.add(write(f, guard)); // tokens climb past the fences' mark

            CountDownLatch sent = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            DynamoDbClient stalling = stallTransactions(f.dynamo, sent, release);
            ExecutorService writer = Executors.newSingleThreadExecutor();
            Future<?> stalledWrite = writer.submit(() -> {
                guard.run(f.table, permit -> permit.writeDynamo(stalling, CutoverIT.guardedPut(f, stalled)));
                return null;
            });
            assertThat(sent.await(30, TimeUnit.SECONDS))
                    .as("logged, and on its way")
                    .isTrue();

            redis.restart();
            afterReconnecting(() -> f.parts.prepare()); // the route, rebuilt from the fences
            f.startTailIfStopped();
            for (int i = 0; i < 5; i++) acknowledged.add((String) afterReconnecting(() -> write(f, guard)));

            AtomicReference<Object> stalledOutcome = new AtomicReference<>();
            DrainProof inner = f.proof(false);
            DrainProof releasing = new DrainProof() {
                @Override
                public Collection<String> differing(Optional<Collection<String>> keys, Duration budget)
                        throws Exception {
                    Collection<String> differ = inner.differing(keys, budget);
                    if (keys.isEmpty() && stalledOutcome.get() == null) { // every key compared, writes flowing
                        release.countDown();
                        try {
                            stalledWrite.get(30, TimeUnit.SECONDS);
                            stalledOutcome.set("acknowledged");
                        } catch (ExecutionException e) {
                            stalledOutcome.set(e.getCause());
                        }
                    }
                    return differ;
                }

                @Override
                public boolean comparesEveryKey() {
                    return false;
                }
            };
            CutoverOutcome back = f.cutover("back").rollback(releasing);
            writer.shutdownNow();

            assertThat(back.detail()).contains("every key of both stores compared before the window");
            if ("acknowledged".equals(stalledOutcome.get())) acknowledged.add(stalled);
            for (String id : acknowledged) {
                assertThat(kind(f, id))
                        .as(id + ", acknowledged by DynamoDB, in Postgres when it reopened")
                        .isEqualTo("guarded");
            }
            assertThat(stalledOutcome.get())
                    .as("the stalled write, released after the comparison")
                    .isInstanceOf(FencedException.class);
            assertThat(item(f, stalled)).as("refused by DynamoDB").isEmpty();
            assertAligned(f, RouteStatus.SOURCE, back.token());
        }
    }

    /**
     * A rollback that started the lost log again and died before it compared every key (here the comparison fails)
     * must not leave a log that passes for complete: the next rollback would compare only the keys written since, and
     * reopen Postgres without the writes from before the loss whose stream records had not arrived. The log stays
     * incomplete until the comparison's differing keys are in it, so the next rollback compares every key again.
     */
    @Test
    void aRollbackThatDiesBeforeItComparedEveryKeyLeavesTheLogIncompleteForTheNext() throws Exception {
        try (PrivateRedis redis = PrivateRedis.start("--appendonly", "no", "--save", "");
                CutoverFixture f = new CutoverFixture(redis.url);
                WriteGuard guard = f.guard()) {
            f.startTail();
            f.cutover("first").cutover(PASS, MATCH);
            List<String> acknowledged = new ArrayList<>();
            for (int i = 0; i < 5; i++) acknowledged.add(write(f, guard));
            redis.restart();
            afterReconnecting(() -> f.parts.prepare());
            f.startTailIfStopped();

            DrainProof inner = f.proof(false);
            DrainProof dying = new DrainProof() {
                @Override
                public Collection<String> differing(Optional<Collection<String>> keys, Duration budget)
                        throws Exception {
                    if (keys.isEmpty()) throw new IllegalStateException("the comparison's process died");
                    return inner.differing(keys, budget);
                }

                @Override
                public boolean comparesEveryKey() {
                    return false;
                }
            };
            assertThatThrownBy(() -> f.cutover("dies").rollback(dying))
                    .isInstanceOf(RebalanceException.class)
                    .hasMessageContaining("could not start the incomplete log of written keys again")
                    .hasMessageContaining("the comparison's process died");
            assertThat(route(f).status()).isEqualTo(RouteStatus.TARGET);
            long epoch = route(f).epoch();
            assertThat(f.parts.writeLog().read(epoch).incomplete())
                    .as("the log the dead rollback started again")
                    .contains("had not compared every key");

            acknowledged.add(write(f, guard));
            CutoverOutcome back = f.cutover("again").rollback(f.proof(false));
            assertThat(back.detail()).contains("every key of both stores compared before the window");
            for (String id : acknowledged)
                assertThat(kind(f, id)).as(id + " in Postgres").isEqualTo("guarded");
        }
    }

    /**
     * Redis restarts empty while a cutover is in its window, and a recovery by another command takes the lease and
     * puts the stores back for SOURCE with a newer token before the cutover goes on to OPEN_TARGET, where it dies
     * right after recording its flip on the Postgres fence (no abort follows). That record is refused (its token is
     * behind the fence's), so the fences keep SOURCE, and no later command moves applications to DynamoDB without a
     * cutover of its own.
     */
    @Test
    void aCutoverWhoseLeaseARecoveryTookRecordsNoFlip() throws Exception {
        try (PrivateRedis redis = PrivateRedis.start("--appendonly", "no", "--save", "");
                CutoverFixture f = new CutoverFixture(redis.url);
                WriteGuard guard = f.guard()) {
            f.startTail();
            AtomicReference<CutoverOutcome> other = new AtomicReference<>();
            Cutover late = f.cutover("late").hooks(new CutoverHooks() {
                @Override
                public void before(CutoverStep step) throws Exception {
                    if (step != CutoverStep.OPEN_TARGET) return;
                    redis.restart();
                    other.set((CutoverOutcome)
                            afterReconnecting(() -> f.cutover("other").recover()));
                }

                @Override
                public void inside(AlignInstruction at) {
                    if (at == AlignInstruction.OPEN_DYNAMO) throw new CutoverIT.Killed(at); // dies, no abort
                }
            });
            assertThatThrownBy(() -> late.cutover(PASS, MATCH)).isNotNull();
            assertThat(other.get())
                    .as("the other command's recovery ran to its end")
                    .isNotNull();
            var pg = f.parts.alignment().postgres();
            assertThat(pg.route()).as("the Postgres fence's record").isEqualTo(RouteStatus.SOURCE);
            assertThat(pg.minToken())
                    .as("set by the recovery")
                    .isEqualTo(other.get().token());
            assertThat(f.parts.alignment().fenced().orElseThrow().status()).isEqualTo(RouteStatus.SOURCE);
            awaitLockFree(f);
            f.startTailIfStopped();
            f.cutover("next").recover();
            assertThat(route(f).status()).isEqualTo(RouteStatus.SOURCE);
            assertAligned(f, RouteStatus.SOURCE, 0);
            String after = write(f, guard);
            assertThat(kind(f, after)).isEqualTo("guarded");
        }
    }

    /**
     * A client whose TransactWriteItems calls stop at the client, before the request is sent, until {@code release}:
     * a write stalled between the guard's log entry and its send. {@code sent} counts down when one arrives.
     */
    private static DynamoDbClient stallTransactions(DynamoDbClient real, CountDownLatch sent, CountDownLatch release) {
        return (DynamoDbClient) Proxy.newProxyInstance(
                DynamoDbClient.class.getClassLoader(), new Class<?>[] {DynamoDbClient.class}, (proxy, m, args) -> {
                    if (m.getName().equals("transactWriteItems")
                            && args != null
                            && args[0] instanceof TransactWriteItemsRequest) {
                        sent.countDown();
                        Paused.until(release);
                    } else if (m.isDefault()) {
                        return InvocationHandler.invokeDefault(proxy, m, args); // builds the request, comes back
                    }
                    try {
                        return m.invoke(real, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    /**
     * At every step of a cutover and of a rollback, Redis restarts empty (the command then fails or finishes as it
     * may); the next command, a recovery, says what it found, and the stores follow the route it leaves. Every write a
     * store acknowledged reaches the other store.
     */
    @Test
    void redisRestartedEmptyAtEveryStepTheNextCommandRebuildsAndAligns() throws Exception {
        try (PrivateRedis redis = PrivateRedis.start("--appendonly", "no", "--save", "");
                CutoverFixture f = new CutoverFixture(redis.url);
                WriteGuard guard = f.guard()) {
            f.startTail();
            List<String> acknowledged = new ArrayList<>();
            for (CutoverStep at : Cutover.CUTOVER_STEPS) {
                acknowledge(f, guard, acknowledged);
                Cutover c = f.cutover("cut-" + at).hooks(restartAt(redis, at));
                runAsItMay(() -> c.cutover(PASS, MATCH));
                recoverAndCheck(f, guard, acknowledged, "after Redis restarted at cutover step " + at);
                if (route(f).status() == RouteStatus.TARGET)
                    f.cutover("undo-" + at).rollback(f.proof(true));
            }
            for (CutoverStep at : Cutover.ROLLBACK_STEPS) {
                f.cutover("forward-" + at).cutover(PASS, MATCH);
                acknowledge(f, guard, acknowledged);
                Cutover c = f.cutover("back-" + at).hooks(restartAt(redis, at));
                runAsItMay(() -> c.rollback(f.proof(true)));
                recoverAndCheck(f, guard, acknowledged, "after Redis restarted at rollback step " + at);
                if (route(f).status() == RouteStatus.TARGET)
                    f.cutover("undo-" + at).rollback(f.proof(true));
            }
        }
    }

    /**
     * With a replica, every route change waits until the replica has it (one more write and {@code WAIT} on one
     * connection), so a failover right after the command returns does not undo the flip in Redis.
     */
    @Test
    void aRouteChangeWaitsUntilAReplicaHasIt() throws Exception {
        try (PrivateRedis primary = PrivateRedis.start("--appendonly", "yes");
                PrivateRedis replica = PrivateRedis.start(
                        "--replicaof",
                        "127.0.0.1",
                        Integer.toString(URI.create(primary.url).getPort()));
                UnifiedJedis toReplica = RedisConnector.connect(replica.url, 2)) {
            await().atMost(BOUND).until(() -> toReplica.info("replication").contains("master_link_status:up"));
            try (CutoverFixture f = new CutoverFixture(primary.url)) {
                f.startTail();
                String routeKey = new Keyspace(f.prefix).scope(f.table).route();
                long waitsBefore = waits(f.redis);
                f.cutover("first").cutover(PASS, MATCH);
                assertThat(toReplica.hget(routeKey, "status"))
                        .as("the replica has the flip when the cutover returns")
                        .isEqualTo("TARGET");
                f.cutover("back").rollback(f.proof(true));
                assertThat(toReplica.hget(routeKey, "status")).isEqualTo("SOURCE");
                assertThat(waits(f.redis))
                        .as("WAIT calls on the primary: one per flip")
                        .isGreaterThanOrEqualTo(waitsBefore + 2);
            }
        }
    }

    /** How many WAIT commands the server ran ({@code INFO commandstats}). */
    private static long waits(UnifiedJedis redis) {
        for (String line : redis.info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_wait:calls=")) {
                return Long.parseLong(line.substring("cmdstat_wait:calls=".length(), line.indexOf(',')));
            }
        }
        return 0;
    }

    private static void acknowledge(CutoverFixture f, WriteGuard guard, List<String> acknowledged) throws Exception {
        try {
            acknowledged.add(write(f, guard));
        } catch (FencedException refused) {
            // not acknowledged: the application retries it
        }
    }

    private static void recoverAndCheck(CutoverFixture f, WriteGuard guard, List<String> acknowledged, String when)
            throws Exception {
        awaitLockFree(f);
        f.startTailIfStopped();
        CutoverOutcome recovered = f.cutover("next").recover();
        RouteStatus route = route(f).status();
        assertAligned(f, route, 0);
        assertThat(recovered.detail())
                .as("the recovery says what it found " + when)
                .contains("Redis had no route")
                .contains("rebuilt from the fences: " + route);
        acknowledge(f, guard, acknowledged);
        await().atMost(BOUND).untilAsserted(() -> {
            for (String id : acknowledged) {
                assertThat(kind(f, id)).as(id + " in Postgres " + when).isEqualTo("guarded");
                assertThat(item(f, id)).as(id + " in DynamoDB " + when).isNotEmpty();
            }
        });
    }

    private static CutoverHooks restartAt(PrivateRedis redis, CutoverStep at) {
        return step -> {
            if (step == at) redis.restart();
        };
    }

    @FunctionalInterface
    private interface Command {
        Object run() throws Exception;
    }

    /** Runs {@code command} again while it fails on a pooled connection the restart broke (each fails once). */
    private static Object afterReconnecting(Command command) throws Exception {
        for (int attempt = 0; ; attempt++) {
            try {
                return command.run();
            } catch (JedisConnectionException broken) {
                if (attempt > 20) throw broken;
            }
        }
    }

    /** The command may finish, abort or fail: what counts is what the next one finds. */
    private static void runAsItMay(Command command) {
        try {
            command.run();
        } catch (Exception e) {
            // asserted through the stores and the route afterwards
        }
    }
}
