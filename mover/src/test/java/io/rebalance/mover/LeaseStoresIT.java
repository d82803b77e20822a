package io.rebalance.mover;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rebalance.protocol.lease.LeaseLost;
import io.rebalance.protocol.lease.LeaseReply;
import io.rebalance.protocol.lease.LeaseStore;
import io.rebalance.protocol.lease.OwnedLease;
import io.rebalance.protocol.lease.PostgresLeaseStore;
import io.rebalance.protocol.lease.RedisLeaseStore;
import io.rebalance.testkit.SharedServices;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The one lease answers alike from Redis and from a Postgres table: grants, extensions and refusals naming the
 * holder; a lapse (by the store's clock) ends a grant, and the next grant, even to the same owner, carries a larger
 * token while the old member is refused; of many acquiring at once exactly one is granted. {@link OwnedLease} over
 * either store stops a holder that outlived its lease.
 */
class LeaseStoresIT {
    private static final SharedServices services = SharedServices.get();

    @RegisterExtension
    static final CoordinatorTables COORDINATOR = new CoordinatorTables();

    private static LeaseStore store(String kind) {
        return kind.equals("redis")
                ? new RedisLeaseStore(services.redis())
                : new PostgresLeaseStore(COORDINATOR.sessions(), COORDINATOR.schema.leases());
    }

    private static String key() {
        return SharedServices.unique("lease") + ":worker";
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void grantsExtensionsAndRefusalsNameTheHolder(String kind) {
        LeaseStore store = store(kind);
        String key = key();
        LeaseReply a = store.acquire(key, "a", Duration.ofSeconds(30));
        assertThat(a.granted()).isTrue();
        assertThat(a.owner()).isEqualTo("a");
        assertThat(store.acquire(key, "a", Duration.ofSeconds(30)).member())
                .as("the holder asking again extends its grant")
                .isEqualTo(a.member());
        LeaseReply b = store.acquire(key, "b", Duration.ofSeconds(30));
        assertThat(b.granted()).isFalse();
        assertThat(b.member()).isEqualTo(a.member());
        assertThat(b.remainingMs()).isPositive();
        assertThat(store.renew(key, a.member(), Duration.ofSeconds(30)).granted())
                .isTrue();
        LeaseReply forged = store.renew(key, "a#" + (a.token() + 100), Duration.ofSeconds(30));
        assertThat(forged.granted()).isFalse();
        assertThat(forged.member()).isEqualTo(a.member());
        assertThat(store.release(key, "b#" + a.token()).granted()).isFalse();
        assertThat(store.holder(key)).isEqualTo(a.member());

        assertThat(store.release(key, a.member()).granted()).isTrue();
        assertThat(store.holder(key)).isNull();
        LeaseReply next = store.acquire(key, "b", Duration.ofSeconds(30));
        assertThat(next.granted()).isTrue();
        assertThat(next.token()).isGreaterThan(a.token());
        assertThat(store.release(key, a.member()).granted())
                .as("a late release")
                .isFalse();
        assertThat(store.holder(key)).isEqualTo(next.member());
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void aLapsedGrantIsRefusedAndTheNextCarriesALargerToken(String kind) {
        LeaseStore store = store(kind);
        String key = key();
        LeaseReply first = store.acquire(key, "a", Duration.ofMillis(300));
        Awaitility.await("the grant lapses by the store's clock")
                .atMost(Duration.ofSeconds(10))
                .until(() -> store.holder(key) == null);
        LeaseReply late = store.renew(key, first.member(), Duration.ofSeconds(30));
        assertThat(late.granted()).isFalse();
        assertThat(late.member()).as("nobody holds it").isEmpty();
        LeaseReply again = store.acquire(key, "a", Duration.ofSeconds(30));
        assertThat(again.granted()).isTrue();
        assertThat(again.token()).as("the same owner, a new grant").isGreaterThan(first.token());
        assertThat(store.renew(key, first.member(), Duration.ofSeconds(30)).member())
                .isEqualTo(again.member());
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void aHolderThatOutlivedItsLeaseWritesNothingMore(String kind) {
        LeaseStore store = store(kind);
        String key = key();
        OwnedLease lease =
                OwnedLease.acquire(store, key, "frozen", Duration.ofMillis(300)).lease();
        assertThat(lease).isNotNull();
        assertThat(lease.beforeWrite()).isPositive();
        // the holder does nothing past its TTL (a process frozen), and another takes the lease
        Awaitility.await("the grant lapses").atMost(Duration.ofSeconds(10)).until(() -> store.holder(key) == null);
        LeaseReply other = store.acquire(key, "other", Duration.ofSeconds(30));
        assertThat(other.granted()).isTrue();
        assertThatThrownBy(lease::beforeWrite).isInstanceOf(LeaseLost.class);
        assertThatThrownBy(lease::check).isInstanceOf(LeaseLost.class);
        assertThat(store.holder(key)).isEqualTo(other.member());
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis", "postgres"})
    void ofManyAcquiringAtOnceOneIsGranted(String kind) throws Exception {
        LeaseStore store = store(kind);
        String key = key();
        oneOfManyGranted(store, key);
        // again on a grant that lapsed: the row exists, and each acquirer tests it as the one before left it
        store.release(key, store.holder(key));
        LeaseReply shortOne = store.acquire(key, "short", Duration.ofMillis(200));
        Awaitility.await("the grant lapses").atMost(Duration.ofSeconds(10)).until(() -> store.holder(key) == null);
        LeaseReply next = oneOfManyGranted(store, key);
        assertThat(next.token()).isGreaterThan(shortOne.token());
    }

    private static LeaseReply oneOfManyGranted(LeaseStore store, String key) throws Exception {
        int n = 8;
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            List<Future<LeaseReply>> replies = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                String owner = "w" + i;
                replies.add(pool.submit(() -> {
                    start.await();
                    return store.acquire(key, owner, Duration.ofSeconds(30));
                }));
            }
            start.countDown();
            List<LeaseReply> all = new ArrayList<>();
            for (Future<LeaseReply> f : replies) all.add(f.get());
            List<LeaseReply> granted = all.stream().filter(LeaseReply::granted).toList();
            assertThat(granted).hasSize(1);
            assertThat(all)
                    .extracting(LeaseReply::member)
                    .containsOnly(granted.get(0).member());
            return granted.get(0);
        } finally {
            pool.shutdownNow();
        }
    }
}
