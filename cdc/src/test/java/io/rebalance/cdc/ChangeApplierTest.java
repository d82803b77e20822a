package io.rebalance.cdc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A batch whose writes partly failed is retried by the stream; the retry reads the rows again and writes newer
 * values. A write of the failed attempt still in flight then could land after the retry's and put an older row
 * back, so a failed apply must not return before every write it started has ended.
 */
class ChangeApplierTest {

    @Test
    void aFailedApplyWaitsForItsOtherWritesBeforeThrowing() throws Exception {
        IllegalStateException refused = new IllegalStateException("DynamoDB refused one batch");
        CompletableFuture<Object> failed = CompletableFuture.failedFuture(refused);
        CompletableFuture<Object> stillWriting = new CompletableFuture<>();
        AtomicReference<Exception> thrown = new AtomicReference<>();
        Thread apply = new Thread(() -> {
            try {
                ChangeApplier.awaitAll(List.<Future<?>>of(failed, stillWriting));
            } catch (Exception e) {
                thrown.set(e);
            }
        });
        apply.start();

        // it either parks waiting for the write in flight (right) or ends at once on the failure (wrong)
        Thread.State state;
        do {
            Thread.onSpinWait();
            state = apply.getState();
        } while (state != Thread.State.WAITING && state != Thread.State.TERMINATED);
        assertEquals(Thread.State.WAITING, state, "returned while a write of the failed attempt was in flight");

        stillWriting.complete(null);
        apply.join();
        assertSame(refused, thrown.get(), "the first failure is what the caller retries on");
    }

    @Test
    void aFailureOfTheLastWriteIsThrownToo() {
        IllegalStateException refused = new IllegalStateException("DynamoDB refused the last batch");
        Exception thrown = assertThrows(
                Exception.class,
                () -> ChangeApplier.awaitAll(List.<Future<?>>of(
                        CompletableFuture.completedFuture(null), CompletableFuture.failedFuture(refused))));
        assertSame(refused, thrown);
    }
}
