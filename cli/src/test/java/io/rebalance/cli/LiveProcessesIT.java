package io.rebalance.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.retry.Retrier;
import io.rebalance.core.slot.Ulid;
import io.rebalance.mover.RunState;
import io.rebalance.mover.redis.RedisRunState;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * A copy process is seen live for as long as it copies. {@code status} said "processes 0 live, 0 in progress" now and
 * then while a copy ran, and the cutover's dry run called the live copy's leases those of "a copy worker that died":
 * the heartbeat shared its threads with the keeper, and every finished slot queued a keeper tick ahead of it, so on a
 * range of many quickly finished (empty) slots the heartbeat waited behind hundreds of ticks, longer than the lease.
 */
class LiveProcessesIT {
    private static final Instant FIRST = Instant.parse("2024-10-20T00:00:00Z");
    private final SharedServices services = SharedServices.get();

    @Test
    void aCopyOfManyEmptySlotsIsLiveAtEveryLookUntilItFinishes() throws Exception {
        String table = SharedServices.unique("live");
        String prefix = SharedServices.unique("live") + ":";
        try (Connection c = services.postgres()) {
            try (Statement st = c.createStatement()) {
                st.execute("CREATE TABLE " + table + " (id text PRIMARY KEY, body text)");
            }
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + " VALUES (?, 'x')")) {
                for (int i = 0; i < 200; i++) {
                    ps.setString(1, Ulid.of(FIRST.toEpochMilli() + i * 60_000L, i, i));
                    ps.addBatch();
                }
                // one row 150 days on: about 3,600 hourly slots, all but a few empty and finished in moments
                ps.setString(1, Ulid.of(Instant.parse("2025-03-19T10:00:00Z").toEpochMilli(), 1, 1));
                ps.addBatch();
                ps.executeBatch();
            }
        }
        List<String> args = new ArrayList<>(List.of("copy", "--create-table", "--no-concurrent-writers"));
        args.addAll(CliRun.base(services, table, prefix));
        args.addAll(List.of("--no-progress", "--set", "mover.leaseTtl=2s", "--set", "mover.workers=8"));
        CompletableFuture<CliRun> copy = CompletableFuture.supplyAsync(() -> CliRun.of(args.toArray(String[]::new)));

        int looks = 0;
        int seenLive = 0;
        List<String> unseen = new ArrayList<>();
        try (var redis = services.redis()) {
            RunState run = new RedisRunState(redis, new Keyspace(prefix).run(), Retrier.standard());
            while (!copy.isDone()) {
                // what status, the cutover's checks and reset ask: a heartbeat within the lease
                boolean live = !run.liveProcesses(2_000).isEmpty();
                String status = redis.get(new Keyspace(prefix).run().status());
                if (live) seenLive++;
                else if (seenLive > 0 && "IN_PROGRESS".equals(status) && !copy.isDone())
                    unseen.add("look " + looks + " at " + Instant.now());
                looks++;
                LockSupport.parkNanos(20_000_000L); // a look every 20 ms: a poll, not a wait for something to happen
            }
        }
        CliRun done = copy.get();
        assertThat(done.exitCode()).as(done.err()).isZero();
        assertThat(seenLive).as("the copy was seen live").isPositive();
        assertThat(unseen)
                .as("looks that found no live process while the run was IN_PROGRESS, of %d", looks)
                .isEmpty();
    }
}
