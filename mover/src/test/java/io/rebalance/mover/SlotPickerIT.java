package io.rebalance.mover;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.retry.Retrier;
import io.rebalance.core.slot.Slot;
import io.rebalance.core.slot.SlotRange;
import io.rebalance.mover.redis.RedisRunState;
import io.rebalance.mover.redis.RedisSlotStore;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.keyspace.RunKeys;
import io.rebalance.testkit.SharedServices;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.UnifiedJedis;

class SlotPickerIT {
    @Test
    void walksNewestFirstSkippingFinishedLeasedBusyAndRestingSlotsThenStartsOverFromTheWatermark() {
        String prefix = SharedServices.unique("pick") + ":";
        try (UnifiedJedis redis = SharedServices.get().redis()) {
            RunKeys keys = new Keyspace(prefix).run();
            RunState run = new RedisRunState(redis, keys, Retrier.standard());
            SlotStore store =
                    new RedisSlotStore(redis, keys, Retrier.standard(), Duration.ofSeconds(20), Duration.ofDays(1));
            SlotRange range = new SlotRange(Slot.parse("20241020.05"), Slot.parse("20241020.00"));
            AtomicInteger seq = new AtomicInteger();
            SlotPicker picker = new SlotPicker(range, store, run, () -> "me/" + seq.incrementAndGet());

            Slot s5 = Slot.parse("20241020.05"), s4 = Slot.parse("20241020.04"), s3 = Slot.parse("20241020.03");
            Slot s2 = Slot.parse("20241020.02"), s1 = Slot.parse("20241020.01"), s0 = Slot.parse("20241020.00");
            store.finish(s5, store.acquire(s5, "other").lease().member(), "x", 1); // finished
            store.acquire(s4, "other"); // leased elsewhere
            picker.failedPermanently(s2); // resting

            var first = picker.next(Set.of(s3), () -> false); // s3 is held by this process already
            assertThat(first.slot()).isEqualTo(s1);
            assertThat(store.leaseHolder(s1)).startsWith(first.owner() + "#");
            assertThat(picker.next(Set.of(s3, s1), () -> false).slot()).isEqualTo(s0);
            assertThat(picker.next(Set.of(s3, s1, s0), () -> false)).isNull(); // end of the walk
            // it met s4 leased elsewhere: the manager looks again as that lease ends, not after a fixed pause
            assertThat(picker.untilLeaseEnds())
                    .hasValueSatisfying(d -> assertThat(d).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(20)));

            store.release(s4, "other"); // its owner died or let go: the next walk finds it
            assertThat(picker.next(Set.of(s3, s1, s0), () -> false).slot()).isEqualTo(s4);

            run.setWatermark(s4); // s5 and s4 compacted: the walk starts below the watermark
            assertThat(picker.next(Set.of(s3, s1, s0), () -> false)).isNull();
            assertThat(picker.untilLeaseEnds()).isEmpty(); // no lease held elsewhere met: nothing to look again for
        }
    }
}
