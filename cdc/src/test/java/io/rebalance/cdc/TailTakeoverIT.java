package io.rebalance.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rebalance.core.Finding;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.lease.LeaseReply;
import io.rebalance.protocol.lease.RedisLeaseStore;
import io.rebalance.testkit.RoomEventsComparison;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Future;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * One active tail at a time, resumable by any process: a second tail stands by while the first holds the lease,
 * takes over when it stops, and resumes from the offsets in Redis with nothing lost, including the changes made
 * while no tail ran. A tail whose lease was taken cannot save offsets any more.
 */
class TailTakeoverIT {
    @Test
    void aStandbyTakesOverAndResumesFromTheSavedOffsets() throws Exception {
        try (TailFixture f = new TailFixture()) {
            List<Future<?>> outcomes = new ArrayList<>();
            Tail first = f.startTail("tail-first", outcomes);
            f.awaitStreaming();
            Tail second = f.startTail("tail-second", outcomes);
            for (int i = 1; i <= 200; i++) f.insert(ChangeKindsIT.id(i), "message", "{\"i\":" + i + "}", i);
            f.awaitItem(ChangeKindsIT.id(200), true);
            String firstMember = f.redis.get(first.keys().lease());
            assertThat(firstMember).startsWith("tail-first#");
            assertThat(second.stats().events()).isZero();
            // status counts the standby (it had no way to know one stood by); the active tail is not counted
            TailMembers members = new TailMembers(f.redis, first.keys());
            Duration ttl = f.config().tail().leaseTtl();
            Awaitility.await()
                    .atMost(Duration.ofSeconds(10))
                    .until(() ->
                            members.standingBy(ttl, f.redis.get(first.keys().lease())) == 1);
            Awaitility.await()
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> f.redis.hlen(first.keys().offsets()) > 0);

            first.close(); // the standby takes the lease and resumes where the first one's offsets say
            // the changes below are the standby's to apply: made once the first gave the lease up, not while its
            // engine may still take one more batch
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> String.valueOf(
                            f.redis.get(first.keys().lease()))
                    .startsWith("tail-second#"));
            for (int i = 1; i <= 100; i++) {
                f.sql("UPDATE " + f.table + " SET seq = seq + 1000 WHERE id = '" + ChangeKindsIT.id(i) + "'");
            }
            f.sql("DELETE FROM " + f.table + " WHERE id = '" + ChangeKindsIT.id(150) + "'");
            f.insert(ChangeKindsIT.id(300), "marker", null, 0);
            f.awaitItem(ChangeKindsIT.id(300), true);
            assertThat(f.redis.get(first.keys().lease())).startsWith("tail-second#");
            assertThat(second.stats().events()).isPositive();
            assertThat(members.standingBy(ttl, f.redis.get(first.keys().lease())))
                    .as("the first tail left when it stopped")
                    .isZero();
            try (Connection pg = f.services.postgres()) {
                assertThat(RoomEventsComparison.differences(pg, f.table, f.dynamo, f.table))
                        .isEmpty();
            }

            // a tail that lost its lease may not renew it or move the offsets: both compare the lease's member,
            // and the successor's token is larger
            LeaseReply stale =
                    new RedisLeaseStore(f.redis).renew(first.keys().lease(), firstMember, Duration.ofSeconds(3));
            assertThat(stale.granted()).isFalse();
            assertThat(stale.member()).startsWith("tail-second#");
            assertThat(stale.token()).isGreaterThan(new LeaseReply(1, firstMember, 0, null).token());
        }
    }

    @Test
    void offsetsOlderThanTheSlotStopTheTailWithTheWayOut() throws Exception {
        try (TailFixture f = new TailFixture()) {
            List<Future<?>> outcomes = new ArrayList<>();
            Tail first = f.startTail("tail-before", outcomes);
            f.awaitStreaming();
            f.insert(ChangeKindsIT.id(1), "message", null, 1);
            f.awaitItem(ChangeKindsIT.id(1), true);
            Awaitility.await()
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> f.redis.hlen(first.keys().offsets()) > 0);
            first.close();
            outcomes.get(0).get(30, java.util.concurrent.TimeUnit.SECONDS);

            // someone drops the slot: the changes made until a new one exists are lost to the stream
            Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
                try (Connection c = f.services.postgres()) {
                    return !TailPreflight.slot(c, f.slotName).active();
                }
            });
            f.sql("SELECT pg_drop_replication_slot('" + f.slotName + "')");
            f.insert(ChangeKindsIT.id(2), "message", null, 2);

            f.startTail("tail-after", outcomes);
            assertThatThrownBy(() -> outcomes.get(1).get(60, java.util.concurrent.TimeUnit.SECONDS))
                    .hasCauseInstanceOf(RebalanceException.class)
                    .cause()
                    .satisfies(e -> assertThat(((RebalanceException) e).code()).isEqualTo(ErrorCode.TAIL_OFFSETS_GONE))
                    .hasMessageContaining("--drop-slot");
        }
    }

    @Test
    void badSourcesAreRefusedWithTheirOwnExitCode() throws Exception {
        try (TailFixture f = new TailFixture()) {
            // a role that may not replicate
            String role = f.table + "_ro";
            f.sql("CREATE ROLE " + role + " LOGIN", "GRANT SELECT ON " + f.table + " TO " + role);
            try {
                f.set("source.user", role);
                Tail tail = new Tail(f.config(), f.sourceTable(), f.dynamo, f.redis, "x");
                assertThatThrownBy(tail::run)
                        .isInstanceOfSatisfying(RebalanceException.class, e -> assertThat(e.code())
                                .isEqualTo(ErrorCode.REPLICATION_ROLE))
                        .hasMessageContaining("ALTER ROLE \"" + role + "\" REPLICATION")
                        .hasMessageContaining("GRANT rds_replication TO \"" + role + "\"");
                // RDS and Aurora grant the right as membership in rds_replication, a role of that name here
                f.sql(
                        "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'rds_replication') THEN"
                                + " CREATE ROLE rds_replication; END IF; END $$",
                        "GRANT rds_replication TO " + role);
                try (Connection asRole = DriverManager.getConnection(f.services.jdbcUrl, role, "")) {
                    TailPreflight.role(asRole, role); // does not throw
                    assertThat(TailPreflight.findings(asRole, f.sourceTable(), f.config()))
                            .filteredOn(finding -> finding.check().equals("replication right"))
                            .singleElement()
                            .satisfies(finding -> assertThat(finding.level()).isEqualTo(Finding.Level.OK));
                }
            } finally {
                f.unset("source.user");
                f.sql("DROP OWNED BY " + role, "DROP ROLE " + role);
            }

            // a key the WAL does not carry: no primary key, only a unique index on id
            f.sql(
                    "ALTER TABLE " + f.table + " DROP CONSTRAINT " + f.table + "_pkey",
                    "CREATE UNIQUE INDEX " + f.table + "_id ON " + f.table + " (id)");
            f.set("source.keyColumns", "id"); // no primary key: the key is named
            Tail noKey = new Tail(f.config(), f.sourceTable(), f.dynamo, f.redis, "x");
            assertThatThrownBy(noKey::run)
                    .isInstanceOfSatisfying(RebalanceException.class, e -> assertThat(e.code())
                            .isEqualTo(ErrorCode.SOURCE_NO_PRIMARY_KEY))
                    .hasMessageContaining("REPLICA IDENTITY USING INDEX");
            f.sql("ALTER TABLE " + f.table + " REPLICA IDENTITY USING INDEX " + f.table + "_id");

            // the slot read by something that is not a tail holding the lease
            List<Future<?>> outcomes = new ArrayList<>();
            f.startTail("owner-a", outcomes);
            f.awaitStreaming();
            // Debezium's slot is active while it creates it, then briefly not until it streams: wait for a change to
            // arrive, or the intruder may take the slot in that gap and stream (the test then hangs)
            f.insert(ChangeKindsIT.id(9), "message", null, 9);
            f.awaitItem(ChangeKindsIT.id(9), true);
            f.set("redis.prefix", f.setting("redis.prefix") + "other:");
            Tail intruder = new Tail(f.config(), f.sourceTable(), f.dynamo, f.redis, "owner-b");
            assertThatThrownBy(intruder::run)
                    .isInstanceOfSatisfying(RebalanceException.class, e -> assertThat(e.code())
                            .isEqualTo(ErrorCode.REPLICATION_SLOT_BUSY))
                    .hasMessageContaining(f.slotName);
        }
    }

    @Test
    void aTailWithNoFreeReplicationSlotSaysSoAndCreatesNothing() throws Exception {
        try (TailFixture f = new TailFixture()) {
            List<String> fillers = new ArrayList<>();
            try (Connection pg = f.services.postgres();
                    var st = pg.createStatement()) {
                var rs = st.executeQuery("SELECT current_setting('max_replication_slots')::int"
                        + " - (SELECT count(*) FROM pg_replication_slots)");
                rs.next();
                for (int i = 0; i < rs.getInt(1); i++) fillers.add(f.table + "_fill_" + i);
            }
            try {
                for (String slot : fillers)
                    f.sql("SELECT pg_create_logical_replication_slot('" + slot + "', 'pgoutput')");
                Tail tail = new Tail(f.config(), f.sourceTable(), f.dynamo, f.redis, "x");
                assertThatThrownBy(tail::run)
                        .isInstanceOfSatisfying(RebalanceException.class, e -> assertThat(e.code())
                                .isEqualTo(ErrorCode.NO_FREE_REPLICATION_SLOT))
                        .hasMessageContaining(f.slotName)
                        .hasMessageContaining("max_replication_slots");
                try (Connection pg = f.services.postgres()) {
                    assertThat(TailPreflight.slot(pg, f.slotName).exists()).isFalse();
                }
                assertThat(f.redis.hlen(tail.keys().offsets())).isZero();
            } finally {
                f.sql("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name LIKE '"
                        + f.table + "\\_fill\\_%'");
            }
        }
    }
}
