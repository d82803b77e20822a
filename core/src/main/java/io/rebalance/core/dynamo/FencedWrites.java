package io.rebalance.core.dynamo;

import io.rebalance.protocol.lease.LeaseLost;
import io.rebalance.protocol.lease.WriteFence;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttribute;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemRequest;

/**
 * Binds a DynamoDB write to the writer's lease (ADR 6): a request carries its {@link WriteFence}, the whole call is
 * given no more time than the lease has left (so the SDK abandons it, retries included, before the lease can pass to
 * another holder), and every attempt asks the fence again just before it is sent, so an attempt that was held up
 * (a stalled thread, a long backoff) past the lease is never sent. The body's last byte is held back for one more
 * check ({@link LastByteFence}), so a pause between that check and the bytes leaving lands nothing either. This
 * interceptor is added last to every client, after any a test adds, so it runs right before transmission.
 */
public final class FencedWrites implements ExecutionInterceptor {
    static final ExecutionAttribute<WriteFence> FENCE = new ExecutionAttribute<>("rebalance.writeFence");
    static final ExecutionAttribute<AtomicBoolean> RELEASED = new ExecutionAttribute<>("rebalance.lastByteReleased");
    private static final ExecutionAttribute<AtomicBoolean> TRANSMITTING =
            new ExecutionAttribute<>("rebalance.transmitting");

    /** A call is abandoned this long before the lease's deadline: time for the abort to reach the connection. */
    static final Duration ABORT_MARGIN = Duration.ofMillis(100);

    /**
     * The request, bound to {@code fence}; unchanged for {@link WriteFence#NONE}. {@code released} is set once an
     * attempt's last byte has passed its check: from then on the request may land.
     */
    static BatchWriteItemRequest bind(BatchWriteItemRequest request, WriteFence fence, AtomicBoolean released) {
        if (fence == WriteFence.NONE) return request;
        Duration left = fence.beforeWrite().minus(ABORT_MARGIN);
        if (left.isNegative() || left.isZero()) left = Duration.ofMillis(1); // the check before sending refuses it
        Duration call = min(left, DynamoClients.CALL_TIMEOUT);
        Duration attempt = min(left, DynamoClients.ATTEMPT_TIMEOUT);
        return request.toBuilder()
                .overrideConfiguration(o -> o.apiCallTimeout(call)
                        .apiCallAttemptTimeout(attempt)
                        .putExecutionAttribute(FENCE, fence)
                        .putExecutionAttribute(RELEASED, released))
                .build();
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    @Override
    public Optional<RequestBody> modifyHttpContent(Context.ModifyHttpRequest context, ExecutionAttributes attributes) {
        WriteFence fence = attributes.getAttribute(FENCE);
        Optional<RequestBody> body = context.requestBody();
        if (fence == null
                || body.isEmpty()
                || body.get().optionalContentLength().isEmpty()) return body; // not held back: released when sent
        AtomicBoolean released = attributes.getAttribute(RELEASED);
        // the signer reads the body too, before an attempt is sent: only the read for the socket releases it
        AtomicBoolean transmitting = new AtomicBoolean();
        attributes.putAttribute(TRANSMITTING, transmitting);
        RequestBody b = body.get();
        long length = b.optionalContentLength().get();
        return Optional.of(RequestBody.fromContentProvider(
                () -> new LastByteFence(b.contentStreamProvider().newStream(), length, fence, transmitting, released),
                length,
                b.contentType()));
    }

    @Override
    public void beforeTransmission(Context.BeforeTransmission context, ExecutionAttributes attributes) {
        WriteFence fence = attributes.getAttribute(FENCE);
        if (fence == null) return;
        if (fence.beforeWrite().compareTo(ABORT_MARGIN) <= 0) {
            throw new LeaseLost("", "the lease ends before a write sent now could land; it is not sent");
        }
        AtomicBoolean transmitting = attributes.getAttribute(TRANSMITTING);
        if (transmitting != null) transmitting.set(true);
        else attributes.getAttribute(RELEASED).set(true);
    }

    @Override
    public void afterTransmission(Context.AfterTransmission context, ExecutionAttributes attributes) {
        AtomicBoolean transmitting = attributes.getAttribute(TRANSMITTING);
        if (transmitting != null) transmitting.set(false); // the next attempt's signing reads the body again
    }
}
