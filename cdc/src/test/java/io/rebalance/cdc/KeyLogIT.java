package io.rebalance.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rebalance.protocol.handoff.KeyLog;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * The tail's key log, which the cutover's window compares instead of whole slots (ADR 7): while a generation is
 * current, every key the tail writes is in it, and only those; a new generation is seen by the tail's next apply,
 * after which the old one takes no more keys; a stopped or lapsed log takes none.
 */
class KeyLogIT {
    private static final Duration BOUND = Duration.ofSeconds(30);

    @Test
    void everyKeyTheTailWritesWhileAGenerationIsCurrentIsInItAndOnlyThere() throws Exception {
        try (TailFixture f = new TailFixture()) {
            List<Future<?>> outcomes = new ArrayList<>();
            f.startTail("log", outcomes);
            f.awaitStreaming();
            KeyLog log = new KeyLog(f.redis, f.config().redis().keyspace().handoff());

            f.insert(ChangeKindsIT.id(0), "unlogged", null, 0);
            f.awaitItem(ChangeKindsIT.id(0), true);
            assertThat(log.current()).isEmpty();

            String first = log.start(Duration.ofMinutes(1));
            f.insert(ChangeKindsIT.id(1), "first", null, 1);
            f.sql("UPDATE " + f.table + " SET kind = 'changed' WHERE id = '" + ChangeKindsIT.id(0) + "'");
            f.awaitItem(ChangeKindsIT.id(1), true);
            await().atMost(BOUND).until(() -> "changed"
                    .equals(f.item(ChangeKindsIT.id(0)).get("kind").s()));
            assertThat(log.keys(first)).containsExactlyInAnyOrder(ChangeKindsIT.id(0), ChangeKindsIT.id(1));

            String second = log.start(Duration.ofMinutes(1));
            f.sql("DELETE FROM " + f.table + " WHERE id = '" + ChangeKindsIT.id(1) + "'");
            assertThat(log.awaitSeen(second, BOUND, () -> false))
                    .as("the tail's next apply notes the new generation")
                    .isTrue();
            f.awaitItem(ChangeKindsIT.id(1), false);
            assertThat(log.keys(second)).containsExactly(ChangeKindsIT.id(1));
            assertThat(log.keys(first))
                    .as("the old generation is complete once the new one is seen")
                    .containsExactlyInAnyOrder(ChangeKindsIT.id(0), ChangeKindsIT.id(1));

            log.add(second, List.of("deferred"));
            assertThat(log.keys(second)).containsExactlyInAnyOrder(ChangeKindsIT.id(1), "deferred");

            log.stop(second);
            log.drop(first);
            assertThat(log.current()).isEmpty();
            f.insert(ChangeKindsIT.id(2), "after stop", null, 2);
            f.awaitItem(ChangeKindsIT.id(2), true);
            assertThat(log.keys(second)).isEmpty();
            assertThat(log.keys(first)).isEmpty();

            // a cutover that died: its generation lapses, and its keys with it
            String lapsing = log.start(Duration.ofMillis(1500));
            f.insert(ChangeKindsIT.id(3), "lapsing", null, 3);
            f.awaitItem(ChangeKindsIT.id(3), true);
            assertThat(log.keys(lapsing)).containsExactly(ChangeKindsIT.id(3));
            await().atMost(BOUND)
                    .until(() -> log.current().isEmpty() && log.keys(lapsing).isEmpty());
            f.insert(ChangeKindsIT.id(4), "after lapse", null, 4);
            f.awaitItem(ChangeKindsIT.id(4), true);
            assertThat(log.keys(lapsing)).isEmpty();
            assertThat(outcomes).allSatisfy(o -> assertThat(o).isNotDone());
        }
    }
}
