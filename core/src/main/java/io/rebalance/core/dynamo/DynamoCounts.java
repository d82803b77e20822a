package io.rebalance.core.dynamo;

import java.util.concurrent.atomic.LongAdder;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.core.metrics.CoreMetric;
import software.amazon.awssdk.metrics.MetricCollection;
import software.amazon.awssdk.metrics.MetricPublisher;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemResponse;

/**
 * What DynamoDB handed back to this process, for its metrics: attempts it throttled (the SDK's own metrics name each
 * failed attempt's error type, SDK retries included) and items a BatchWriteItem returned unprocessed. One per process
 * because every client a process opens adds to the same figures, and a counter never resets while the process lives.
 */
public final class DynamoCounts implements MetricPublisher, ExecutionInterceptor {
    private static final DynamoCounts PROCESS = new DynamoCounts();

    /** The value {@link CoreMetric#ERROR_TYPE} takes for a throttled attempt (the SDK's enum for it is internal). */
    static final String THROTTLING = "Throttling";

    private final LongAdder throttled = new LongAdder();
    private final LongAdder unprocessed = new LongAdder();

    private DynamoCounts() {}

    /** The figures of this process, which {@link DynamoClients#create} wires into every client. */
    public static DynamoCounts process() {
        return PROCESS;
    }

    /** Attempts DynamoDB refused as throttled (ProvisionedThroughputExceeded, ThrottlingException, ...). */
    public long throttled() {
        return throttled.sum();
    }

    /** Items DynamoDB handed back unprocessed from BatchWriteItem (each is resubmitted: none is lost). */
    public long unprocessedItems() {
        return unprocessed.sum();
    }

    @Override
    public void publish(MetricCollection call) {
        for (MetricCollection attempt : call.children()) {
            for (String type : attempt.metricValues(CoreMetric.ERROR_TYPE)) {
                if (THROTTLING.equals(type)) throttled.increment();
            }
        }
    }

    @Override
    public void afterExecution(Context.AfterExecution context, ExecutionAttributes attributes) {
        if (context.response() instanceof BatchWriteItemResponse r && r.hasUnprocessedItems()) {
            r.unprocessedItems().values().forEach(items -> unprocessed.add(items.size()));
        }
    }

    @Override
    public void close() {}
}
