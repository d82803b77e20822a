package io.rebalance.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.lease.LeaseLost;
import io.rebalance.protocol.lock.LockHolders;
import io.rebalance.protocol.lock.LockLease;
import io.rebalance.protocol.lock.LockWaitTimeoutException;
import io.rebalance.protocol.lock.SharedExclusiveLock;
import io.rebalance.protocol.lock.SharedExclusiveLock.Granted;
import io.rebalance.protocol.lock.SharedExclusiveLock.Pending;
import io.rebalance.protocol.lock.SharedExclusiveLock.Refused;
import io.rebalance.testkit.SharedServices;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.UnifiedJedis;

/** The readers-writers lease against a real Redis: exclusion, writer preference, lapses, fencing tokens. */
class SharedExclusiveLockIT {
    private static final Duration LONG = Duration.ofSeconds(30);

    private final UnifiedJedis redis = SharedServices.get().redis();
    private final SharedExclusiveLock lock =
            new SharedExclusiveLock(redis, new Keyspace(SharedServices.unique("lock") + ":").scope("room_events"));

    @AfterEach
    void close() {
        redis.close();
    }

    @Test
    void sharedLeasesCoexistAndTheExclusiveOneWaitsForAllOfThem() {
        LockLease a = granted(lock.tryShared("app-a", LONG));
        LockLease b = granted(lock.tryShared("app-b", LONG));
        assertThat(b.token()).isGreaterThan(a.token());
        assertThat(a.member()).isEqualTo("app-a#" + a.token());

        Pending pending = (Pending) lock.tryExclusive("cutover", LONG);
        assertThat(pending.sharedHolders()).isEqualTo(2);
        assertThat(pending.longestRemainingMs()).isBetween(1L, LONG.toMillis());
        lock.release(a);
        assertThat(lock.tryExclusive("cutover", LONG)).isInstanceOf(Pending.class);
        lock.release(b);
        LockLease ex = granted(lock.tryExclusive("cutover", LONG));
        assertThat(ex.token()).isGreaterThan(b.token());

        Refused refused = (Refused) lock.tryShared("app-c", LONG);
        assertThat(refused.by()).isEqualTo("exclusive");
        assertThat(refused.owner()).isEqualTo("cutover");
        assertThat(lock.tryExclusive("other-cutover", LONG)).isInstanceOf(Refused.class);

        lock.release(ex);
        assertThat(granted(lock.tryShared("app-c", LONG)).token()).isGreaterThan(ex.token());
    }

    @Test
    void aPendingExclusiveRequestStopsNewSharedLeases() {
        LockLease a = granted(lock.tryShared("app-a", LONG));
        assertThat(lock.tryExclusive("cutover", LONG)).isInstanceOf(Pending.class);

        Refused refused = (Refused) lock.tryShared("app-b", LONG);
        assertThat(refused.by()).isEqualTo("pending");
        assertThat(refused.owner()).isEqualTo("cutover");
        // the holder from before the request may still renew and finish its write
        assertThat(lock.renew(a, LONG).expiresAtMs()).isGreaterThanOrEqualTo(a.expiresAtMs());

        LockHolders holders = lock.holders();
        assertThat(holders.pending().owner()).isEqualTo("cutover");
        assertThat(holders.shared()).extracting(LockHolders.Shared::member).containsExactly(a.member());

        lock.withdraw("cutover");
        assertThat(lock.tryShared("app-b", LONG)).isInstanceOf(Granted.class);
    }

    @Test
    void aDeadHoldersLeaseLapsesAndCannotBeRenewed() {
        LockLease dead = granted(lock.tryShared("dead-app", Duration.ofMillis(300)));
        assertThat(lock.tryExclusive("cutover", LONG)).isInstanceOf(Pending.class);
        // nobody releases it: the exclusive lease is granted once it lapses
        LockLease ex = await().atMost(10, TimeUnit.SECONDS)
                                .pollInterval(Duration.ofMillis(20))
                                .until(() -> lock.tryExclusive("cutover", LONG), Granted.class::isInstance)
                        instanceof Granted g
                ? g.lease()
                : null;
        assertThat(ex).isNotNull();
        assertThatThrownBy(() -> lock.renew(dead, LONG))
                .isInstanceOf(LeaseLost.class)
                .hasMessageContaining("dead-app#" + dead.token())
                .hasMessageContaining("lapsed");

        LockLease lapsedExclusive = granted(lock.tryExclusive("cutover", LONG));
        lock.release(ex);
        LockLease next = granted(lock.tryExclusive("cutover-2", LONG));
        assertThatThrownBy(() -> lock.renew(lapsedExclusive, LONG))
                .isInstanceOf(LeaseLost.class)
                .hasMessageContaining("now held by cutover-2");
        // releasing someone else's lease leaves it alone
        lock.release(lapsedExclusive);
        assertThat(lock.holders().exclusive().owner()).isEqualTo("cutover-2");
        assertThat(lock.holders().exclusive().token()).isEqualTo(next.token());
    }

    @Test
    void aDeadCutoversRequestAndLeaseLapseToo() {
        assertThat(lock.tryExclusive("dead-cutover", Duration.ofMillis(300))).isInstanceOf(Granted.class);
        assertThat(lock.tryShared("app", LONG)).isInstanceOf(Refused.class);
        await().atMost(10, TimeUnit.SECONDS)
                .pollInterval(Duration.ofMillis(20))
                .until(() -> lock.tryShared("app", LONG), Granted.class::isInstance);

        // a requester that dies while waiting for the holders: its request lapses and writes go on
        assertThat(lock.tryExclusive("dead-requester", Duration.ofMillis(300))).isInstanceOf(Pending.class);
        assertThat(lock.tryShared("app-2", LONG)).isInstanceOf(Refused.class);
        await().atMost(10, TimeUnit.SECONDS)
                .pollInterval(Duration.ofMillis(20))
                .until(() -> lock.tryShared("app-2", LONG), Granted.class::isInstance);
        assertThat(lock.holders().pending()).isNull();
    }

    @Test
    void aWriterWaitsForTheExclusiveHolderAndGivesUpAtItsBound() throws Exception {
        LockLease ex = granted(lock.tryExclusive("cutover", LONG));
        assertThatThrownBy(() -> lock.acquireShared("app", LONG, Duration.ofMillis(200)))
                .isInstanceOf(LockWaitTimeoutException.class)
                .hasMessageContaining("writes to 'room_events' are blocked")
                .hasMessageContaining("held by cutover")
                .hasMessageContaining("--max-write-block");

        CompletableFuture<LockLease> waiting = CompletableFuture.supplyAsync(() -> {
            try {
                return lock.acquireShared("app", LONG, Duration.ofSeconds(30));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        // the writer is parked behind the exclusive lease until it goes
        assertThat(lock.holders().shared()).isEmpty();
        assertThat(waiting).isNotDone();
        lock.release(ex);
        assertThat(waiting.get(10, TimeUnit.SECONDS).token()).isGreaterThan(ex.token());
    }

    @Test
    void scriptsAreSentAgainWhenRedisForgotThem() {
        granted(lock.tryShared("app", LONG));
        redis.scriptFlush();
        assertThat(lock.tryShared("app", LONG)).isInstanceOf(Granted.class);
        assertThat(lock.holders().shared()).hasSize(2);
    }

    private static LockLease granted(SharedExclusiveLock.Attempt a) {
        assertThat(a).isInstanceOf(Granted.class);
        return ((Granted) a).lease();
    }
}
