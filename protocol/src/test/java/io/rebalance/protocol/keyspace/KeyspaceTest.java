package io.rebalance.protocol.keyspace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.util.JedisClusterCRC16;

/**
 * The one keyspace: the keys each script is given together share a Redis Cluster hash slot, and every key a run
 * writes, lease token counters included, belongs to the reset group that {@code rebalance reset --forget} names.
 */
class KeyspaceTest {
    private final Keyspace keys = new Keyspace("mgre:");

    @Test
    void theKeysEachScriptIsGivenTogetherShareAHashSlot() {
        TailKeys tail = keys.tail();
        HandoffKeys handoff = keys.handoff();
        RunKeys run = keys.run();
        ScopeKeys scope = keys.scope("room_events");
        Map<String, List<String>> scripts = Map.of(
                "save-offsets.lua", List.of(tail.lease(), tail.offsets()),
                "lease-acquire.lua (tail)", List.of(tail.lease(), Keyspace.leaseToken(tail.lease())),
                "lease-acquire.lua (keeper)", List.of(run.keeper(), Keyspace.leaseToken(run.keeper())),
                "keylog-record.lua",
                        List.of(handoff.keyLog(), handoff.keyLogSeen(), handoff.keyLogKeys("7"), tail.status()),
                "slot_save.lua",
                        List.of(
                                run.slotLease("20241020.02"),
                                run.slotState("20241020.02"),
                                Keyspace.leaseToken(run.slotLease("20241020.02"))),
                "exclusive-acquire.lua / route-set.lua",
                        List.of(
                                scope.shared(),
                                scope.exclusive(),
                                scope.pending(),
                                scope.token(),
                                scope.route(),
                                scope.targetWrites(),
                                scope.targetWritesLog()));
        scripts.forEach((script, given) -> assertThat(given.stream().map(JedisClusterCRC16::getSlot))
                .as(script + " " + given)
                .containsOnly(JedisClusterCRC16.getSlot(given.get(0))));
    }

    @Test
    void everyKeyOfARunBelongsToTheResetGroupThatNamesIt() {
        RunKeys run = keys.run();
        TailKeys tail = keys.tail();
        HandoffKeys handoff = keys.handoff();
        ScopeKeys scope = keys.scope("room_events");
        List<String> copy = List.of(
                run.status(),
                run.plan(),
                run.lastSlot(),
                run.keeper(),
                Keyspace.leaseToken(run.keeper()),
                run.rateLimit(),
                run.rateWindow(1_729_382_400L),
                run.rowsCopied(),
                run.slotsFinished(),
                run.progress(),
                run.processes(),
                run.processInfo(),
                run.events(),
                run.history(),
                run.slotLease("20241020.02"),
                Keyspace.leaseToken(run.slotLease("20241020.02")),
                run.slotState("notime"),
                keys.verified(),
                keys.refused());
        List<String> tailKeys = List.of(
                tail.offsets(),
                tail.lease(),
                Keyspace.leaseToken(tail.lease()),
                tail.status(),
                tail.history(),
                tail.repairQueue(),
                tail.repairing(),
                tail.repairRequest("ab12"),
                tail.repairAnswer("ab12"),
                tail.touched("20241020.02"),
                tail.touchedSlots(),
                tail.changedSlots(),
                tail.partitions(),
                handoff.hold(),
                handoff.held(),
                handoff.reverseDrain(),
                handoff.reverseStatus(),
                handoff.reverseShards(),
                handoff.keyLog(),
                handoff.keyLogSeen(),
                handoff.keyLogKeys("7"),
                "mgre:cdc:offsets"); // a build before the tag's name
        List<String> route = List.of(
                keys.routes(),
                scope.shared(),
                scope.exclusive(),
                scope.pending(),
                scope.token(),
                scope.route(),
                scope.cutover(),
                scope.cutoverLog(),
                scope.targetWrites(),
                scope.targetWritesLog(),
                keys.scope("cdc").route()); // a scope may be named like the tail's tag
        copy.forEach(k -> assertThat(keys.groupOf(k)).as(k).contains(ResetGroup.COPY));
        tailKeys.forEach(k -> assertThat(keys.groupOf(k)).as(k).contains(ResetGroup.TAIL));
        route.forEach(k -> assertThat(keys.groupOf(k)).as(k).contains(ResetGroup.ROUTE));
    }

    @Test
    void keysOfARunUnderALongerPrefixAreNoneOfThisRuns() {
        Keyspace other = new Keyspace("mgre:b:");
        for (String k : List.of(other.run().status(), other.tail().offsets(), other.routes(), "mgre:unknown")) {
            assertThat(keys.groupOf(k)).as(k).isEqualTo(Optional.empty());
        }
        assertThat(keys.groupOf("other:status")).isEmpty();
    }

    @Test
    void everyKeyStartsWithThePrefixAndABraceInItIsRefused() {
        assertThat(keys.tail().offsets()).isEqualTo("mgre:{cdc}:offsets");
        assertThat(keys.run().slotLease("20241020.02")).isEqualTo("mgre:{20241020.02}:worker");
        assertThat(Keyspace.leaseToken(keys.run().keeper())).isEqualTo("mgre:keeper:token{mgre:keeper}");
        assertThatThrownBy(() -> new Keyspace("{run}:")).hasMessageContaining("redis.prefix '{run}:'");
        assertThatThrownBy(() -> keys.scope("a{b}")).hasMessageContaining("scope 'a{b}'");
    }
}
