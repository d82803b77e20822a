package io.rebalance.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.protocol.keyspace.TailKeys;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Repairs asked of the running tail: it writes the keys again from Postgres (a missing item put back, an extra one
 * deleted) and answers with the count; a request a dead tail took and did not answer is carried out by the next
 * one; without a tail, nobody answers and the caller is told so.
 */
class RepairQueueIT {
    @Test
    void theTailCarriesOutRepairsIncludingOnesADeadTailLeft() throws Exception {
        try (TailFixture f = new TailFixture()) {
            TailKeys keys = f.config().redis().keyspace().tail();
            RepairQueue queue = new RepairQueue(f.redis, keys);
            assertThat(queue.submit(List.of(ChangeKindsIT.id(1)), Duration.ofSeconds(1)))
                    .as("no tail answers")
                    .isEmpty();
            f.redis.del(keys.repairQueue()); // that request would otherwise be served below

            // a request a tail took (moved to the processing list) and died before answering
            f.redis.rpush(keys.repairRequest("left-behind"), ChangeKindsIT.id(2));
            f.redis.rpush(keys.repairing(), "left-behind");
            List<Future<?>> outcomes = new ArrayList<>();
            f.startTail("tail-repairs", outcomes);
            f.awaitStreaming();
            for (int i = 1; i <= 3; i++) f.insert(ChangeKindsIT.id(i), "message", null, i);
            f.awaitItem(ChangeKindsIT.id(3), true);

            f.dynamo.deleteItem(b -> b.tableName(f.table).key(Map.of("id", AttributeValue.fromS(ChangeKindsIT.id(1)))));
            f.dynamo.putItem(b -> b.tableName(f.table)
                    .item(Map.of("id", AttributeValue.fromS(ChangeKindsIT.id(9)), "_slot", AttributeValue.fromS("x"))));
            assertThat(queue.submit(List.of(ChangeKindsIT.id(1), ChangeKindsIT.id(9)), Duration.ofSeconds(60)))
                    .hasValue(2);
            assertThat(f.item(ChangeKindsIT.id(1))).as("put back").isNotEmpty();
            assertThat(f.item(ChangeKindsIT.id(9))).as("deleted: no such row").isEmpty();
            assertThat(f.redis.llen(keys.repairing()))
                    .as("the left-behind request was served")
                    .isZero();
            assertThat(f.redis.exists(keys.repairRequest("left-behind"))).isFalse();
            assertThat(outcomes).noneMatch(Future::isDone);
        }
    }
}
