package io.rebalance.mover;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.slot.Slot;
import io.rebalance.mover.redis.RedisSlotStore;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.keyspace.RunKeys;
import io.rebalance.protocol.lease.RedisLeaseStore;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.util.JedisClusterCRC16;

/**
 * The key layout works on Redis Cluster: a script may only touch keys of one hash slot, so each script addresses
 * only the keys it is passed, and the keys passed together (a slot's lease and state) share a hash slot, while
 * different slots spread over the cluster.
 */
class ClusterLayoutTest {
    private static final List<String> SCRIPTS = List.of("slot_save.lua", "slot_error.lua", "status_cas.lua");
    private static final List<String> LEASE_SCRIPTS =
            List.of("lease-acquire.lua", "lease-renew.lua", "lease-release.lua");

    @Test
    void aSlotsLeaseAndStateShareAHashSlotAndSlotsSpreadOverTheCluster() {
        RunKeys keys = new Keyspace("mgre:").run();
        Set<Integer> used = new HashSet<>();
        Slot s = Slot.containing(Instant.parse("2024-10-20T00:00:00Z"));
        for (int i = 0; i < 2_000; i++, s = s.older()) {
            int lease = JedisClusterCRC16.getSlot(keys.slotLease(s.name()));
            assertThat(JedisClusterCRC16.getSlot(keys.slotState(s.name())))
                    .as(s.name())
                    .isEqualTo(lease);
            assertThat(JedisClusterCRC16.getSlot(Keyspace.leaseToken(keys.slotLease(s.name()))))
                    .as(s.name() + " token counter")
                    .isEqualTo(lease);
            used.add(lease);
        }
        assertThat(used.size()).as("hash slots used by 2,000 slots").isGreaterThan(1_500);
    }

    @Test
    void everyLeaseSharesAHashSlotWithItsTokenCounter() {
        for (String prefix : List.of("mgre:", "run7:", "")) {
            for (String lease : List.of(
                    new Keyspace(prefix).run().keeper(),
                    new Keyspace(prefix).tail().lease())) {
                assertThat(JedisClusterCRC16.getSlot(Keyspace.leaseToken(lease)))
                        .as(lease)
                        .isEqualTo(JedisClusterCRC16.getSlot(lease));
                assertThat(Keyspace.leaseToken(lease)).as("under the prefix").startsWith(prefix);
            }
        }
    }

    @Test
    void everyScriptTouchesOnlyTheKeysItIsGiven() throws IOException {
        for (String script : SCRIPTS) touchesOnlyItsKeys(RedisSlotStore.class, script);
        for (String script : LEASE_SCRIPTS) touchesOnlyItsKeys(RedisLeaseStore.class, script);
    }

    private static void touchesOnlyItsKeys(Class<?> owner, String script) throws IOException {
        Pattern call = Pattern.compile("redis\\.call\\('([A-Z]+)',\\s*([^,)]+)");
        String source;
        try (InputStream in = owner.getResourceAsStream(script)) {
            source = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        Matcher m = call.matcher(source);
        int calls = 0;
        while (m.find()) {
            calls++;
            assertThat(m.group(2).trim()).as(script + ": " + m.group()).matches("KEYS\\[\\d]");
        }
        assertThat(calls).as(script).isPositive();
    }
}
