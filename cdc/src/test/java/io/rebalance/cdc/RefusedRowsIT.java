package io.rebalance.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.dynamo.DynamoClients;
import io.rebalance.core.refused.RefusedRows;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * One row DynamoDB cannot hold does not stop the stream: it is listed as refused (id, column, reason, WAL position)
 * and every change after it is applied. Fixing the row in Postgres applies it and takes it off the list. While
 * changes wait (DynamoDB stalled), the published lag is the age of the oldest waiting change, not of the last one
 * applied, so a stalled tail does not look healthy.
 */
class RefusedRowsIT {
    @Test
    void aRowDynamoDbCannotHoldIsListedAndTheStreamGoesOn() throws Exception {
        try (TailFixture f = new TailFixture()) {
            f.set("target.json", "map");
            List<Future<?>> outcomes = new ArrayList<>();
            Tail tail = f.startTail("tail-refused", outcomes);
            f.awaitStreaming();
            for (int i = 1; i <= 10; i++) f.insert(ChangeKindsIT.id(i), "message", "{\"n\":" + i + "}", i);
            String bad = ChangeKindsIT.id(11);
            f.insert(bad, "message", "{\"x\": 1.5e300}", 11); // outside DynamoDB's number range
            for (int i = 12; i <= 20; i++) f.insert(ChangeKindsIT.id(i), "message", "{\"n\":" + i + "}", i);

            Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> !f.item(ChangeKindsIT.id(20))
                    .isEmpty());
            for (int i = 1; i <= 20; i++) {
                if (i != 11)
                    assertThat(f.item(ChangeKindsIT.id(i))).as("row %d", i).isNotEmpty();
            }
            assertThat(f.item(bad)).as("the refused row").isEmpty();

            RefusedRows refused = new RefusedRows(f.redis, f.config().redis().keyspace());
            List<RefusedRows.Refusal> listed = refused.all();
            assertThat(listed).hasSize(1);
            RefusedRows.Refusal r = listed.get(0);
            assertThat(r.id()).isEqualTo(bad);
            assertThat(r.column()).isEqualTo("data");
            assertThat(r.reason()).contains("outside DynamoDB's number range");
            assertThat(r.by()).isEqualTo("tail");
            assertThat(r.lsn()).matches("[0-9A-F]+/[0-9A-F]+");
            assertThat(r.slot()).isNotEmpty();
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> "1"
                    .equals(f.redis.hget(tail.keys().status(), "refused")));

            f.sql("UPDATE " + f.table + " SET data = '{\"x\": 1.5}' WHERE id = '" + bad + "'");
            f.awaitItem(bad, true);
            assertThat(refused.all())
                    .as("a row applied after all leaves the list")
                    .isEmpty();
            assertThat(tail.stats().applyRetries())
                    .as("a refusal is not retried")
                    .isZero();
            assertThat(outcomes).noneMatch(Future::isDone);
        }
    }

    @Test
    void aRowDynamoDbItselfRefusesIsListedAndTheStreamGoesOn() throws Exception {
        try (TailFixture f = new TailFixture()) {
            String bad = ChangeKindsIT.id(3);
            RefuseItem refuse = new RefuseItem(bad);
            try (DynamoDbClient refusing =
                    DynamoClients.create(f.config().target(), f.services.dynamo.endpoint(), 16, List.of(refuse))) {
                List<Future<?>> outcomes = new ArrayList<>();
                Tail tail = f.startTail("tail-invalid", outcomes, refusing);
                f.awaitStreaming();
                for (int i = 1; i <= 6; i++) f.insert(ChangeKindsIT.id(i), "message", null, i);
                f.awaitItem(ChangeKindsIT.id(6), true);
                for (int i = 1; i <= 6; i++) {
                    assertThat(f.item(ChangeKindsIT.id(i)).isEmpty())
                            .as("row %d", i)
                            .isEqualTo(i == 3);
                }
                List<RefusedRows.Refusal> listed =
                        new RefusedRows(f.redis, f.config().redis().keyspace()).all();
                assertThat(listed).extracting(RefusedRows.Refusal::id).containsExactly(bad);
                assertThat(listed.get(0).reason())
                        .contains("DynamoDB refused the item")
                        .contains("injected");
                assertThat(tail.stats().applyRetries())
                        .as("a permanent error is not retried")
                        .isZero();
                assertThat(outcomes).noneMatch(Future::isDone);
            }
        }
    }

    @Test
    void lagIsTheAgeOfTheOldestWaitingChange() throws Exception {
        try (TailFixture f = new TailFixture()) {
            Gate gate = new Gate();
            try (DynamoDbClient gated =
                    DynamoClients.create(f.config().target(), f.services.dynamo.endpoint(), 16, List.of(gate))) {
                List<Future<?>> outcomes = new ArrayList<>();
                Tail tail = f.startTail("tail-lag", outcomes, gated);
                f.awaitStreaming();
                f.insert(ChangeKindsIT.id(1), "message", null, 1);
                f.awaitItem(ChangeKindsIT.id(1), true);

                gate.close();
                f.insert(ChangeKindsIT.id(2), "message", null, 2);
                Awaitility.await()
                        .atMost(Duration.ofSeconds(30))
                        .until(() -> lag(f, tail) >= 3_000); // the change waits, and its age shows
                gate.open();
                f.awaitItem(ChangeKindsIT.id(2), true);
                Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> lag(f, tail) == 0);
                assertThat(outcomes).noneMatch(Future::isDone);
            } finally {
                gate.open();
            }
        }
    }

    private static long lag(TailFixture f, Tail tail) {
        String v = f.redis.hget(tail.keys().status(), "lag_ms");
        return v == null ? -1 : Long.parseLong(v);
    }

    /**
     * DynamoDB's answer to an item it cannot take (ValidationException), for one id: what a real DynamoDB says of an
     * item the codec let through, which DynamoDB Local cannot be made to say on demand.
     */
    static final class RefuseItem implements ExecutionInterceptor {
        private final String id;

        RefuseItem(String id) {
            this.id = id;
        }

        @Override
        public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
            if (!(context.request() instanceof BatchWriteItemRequest r)) return;
            for (List<WriteRequest> writes : r.requestItems().values()) {
                for (WriteRequest w : writes) {
                    if (w.putRequest() != null
                            && id.equals(w.putRequest().item().get("id").s())) {
                        throw DynamoDbException.builder()
                                .statusCode(400)
                                .awsErrorDetails(AwsErrorDetails.builder()
                                        .errorCode("ValidationException")
                                        .errorMessage("Item size has exceeded the maximum allowed size (injected)")
                                        .build())
                                .build();
                    }
                }
            }
        }
    }

    /** Holds every DynamoDB request before it is sent while closed: a DynamoDB that stopped answering. */
    static final class Gate implements ExecutionInterceptor {
        private volatile CountDownLatch closed = new CountDownLatch(0);

        void close() {
            closed = new CountDownLatch(1);
        }

        void open() {
            closed.countDown();
        }

        @Override
        public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
            try {
                closed.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
