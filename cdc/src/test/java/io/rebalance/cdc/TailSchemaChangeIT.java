package io.rebalance.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The tail reads each changed row with the columns it started with. A column added under it stops it (exit 35,
 * naming the change and the way on) instead of writing items without the column from then on; a change made after
 * the stop is not written in the old shape. Before, the added column was silently left out of every item.
 */
class TailSchemaChangeIT {
    @Test
    void aColumnAddedUnderTheRunningTailStopsIt() throws Exception {
        try (TailFixture f = new TailFixture()) {
            List<Future<?>> outcomes = new ArrayList<>();
            f.startTail("tail-schema", outcomes);
            f.awaitStreaming();
            f.insert(ChangeKindsIT.id(1), "message", null, 1);
            f.awaitItem(ChangeKindsIT.id(1), true);

            f.sql("ALTER TABLE " + f.table + " ADD COLUMN note text");

            assertThatThrownBy(() -> outcomes.get(0).get(60, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .cause()
                    .isInstanceOf(RebalanceException.class)
                    .satisfies(e -> assertThat(((RebalanceException) e).code()).isEqualTo(ErrorCode.SCHEMA_CHANGED))
                    .hasMessageContaining("column note (text) was added")
                    .hasMessageContaining("rebalance copy --accept-schema");
            f.insert(ChangeKindsIT.id(2), "message", null, 2);
            f.sql("UPDATE " + f.table + " SET note = 'after' WHERE id = '" + ChangeKindsIT.id(1) + "'");
            assertThat(f.item(ChangeKindsIT.id(2)))
                    .as("nothing written in the old shape after the stop")
                    .isEmpty();
        }
    }
}
