package io.rebalance.bench;

import io.rebalance.core.codec.RowCodec;
import io.rebalance.core.codec.SourceRow;
import io.rebalance.core.config.ConfigLoader;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.DynamoCounts;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.local.RoomEventsGenerator;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.InterceptorContext;
import software.amazon.awssdk.core.metrics.CoreMetric;
import software.amazon.awssdk.metrics.MetricCollection;
import software.amazon.awssdk.metrics.MetricCollector;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemRequest;
import software.amazon.awssdk.services.dynamodb.model.BatchWriteItemResponse;

/**
 * What counting costs the copy, per row, against the cheapest thing the copy does with each row in the same run:
 * encoding it into an item (the copy's CPU per row is several times that; bench/copy.sh prints it).
 *
 * <ul>
 *   <li>{@code countBatch}: what every BatchWriteItem call of 25 rows now adds whether metrics are served or not:
 *       {@link DynamoCounts} as the SDK's metric publisher (one call's attempt metrics) and as an interceptor (its
 *       response), and the two counter adds a page makes (rows written, rows refused), at one page per 40 batches
 *       counted here as one per batch, to overstate it.
 *   <li>{@code encodeRow}: one generated {@code room_events} row encoded by the product's {@link RowCodec}.
 * </ul>
 * Run by bench/counting.sh: Postgres gives the rows, nothing is written.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class CountingBenchmark {
    static final int ROWS_PER_BATCH = 25;

    private MetricCollection call;
    private InterceptorContext reply;
    private final ExecutionAttributes attributes = new ExecutionAttributes();
    private final AtomicLong rowsWritten = new AtomicLong(); // MoverCounters' fields are AtomicLongs like these
    private final AtomicLong rowsRefused = new AtomicLong();
    private RowCodec codec;
    private SourceRow row;

    @Setup
    public void setUp() throws Exception {
        MetricCollector collector = MetricCollector.create("ApiCall");
        MetricCollector attempt = collector.createChild("ApiCallAttempt");
        attempt.reportMetric(CoreMetric.SERVICE_CALL_DURATION, Duration.ofMillis(12));
        call = collector.collect();
        reply = InterceptorContext.builder()
                .request(BatchWriteItemRequest.builder().build())
                .response(BatchWriteItemResponse.builder()
                        .unprocessedItems(Map.of())
                        .build())
                .build();
        String table = "bench_counting";
        MigrationConfig config = new ConfigLoader(System.getenv()).load(null, Map.of("source.table", table));
        try (Connection c = new SourceSession(config.source()).open();
                Statement st = c.createStatement()) {
            st.execute("DROP TABLE IF EXISTS " + table);
            RoomEventsGenerator.create(c, table, 100, Instant.parse("2024-10-20T00:00:00Z"), 1, 3);
            SourceTable source = SourceTable.inspect(c, config);
            codec = source.codec(config.target());
            try (ResultSet rs = st.executeQuery("SELECT id::text, room_id::text, kind, data::text, created_at::text,"
                    + " seq::text FROM " + table + " LIMIT 1")) {
                rs.next();
                Object[] v = new Object[6];
                for (int i = 0; i < 6; i++) v[i] = rs.getString(i + 1);
                row = new SourceRow((String) v[0], v);
            }
            st.execute("DROP TABLE " + table);
        }
    }

    @Benchmark
    public void countBatch() {
        DynamoCounts.process().publish(call);
        DynamoCounts.process().afterExecution(reply, attributes);
        rowsWritten.addAndGet(ROWS_PER_BATCH);
        rowsRefused.addAndGet(0);
    }

    @Benchmark
    public void encodeRow(Blackhole bh) {
        Map<String, AttributeValue> item = codec.encode(row);
        bh.consume(item);
    }

    /** Runs both and prints the cost of counting per row against encoding one row. */
    public static void main(String[] args) throws Exception {
        var results = new Runner(new OptionsBuilder()
                        .include(CountingBenchmark.class.getSimpleName())
                        .build())
                .run();
        double count = Double.NaN;
        double encode = Double.NaN;
        for (var r : results) {
            double ns = r.getPrimaryResult().getScore();
            if (r.getParams().getBenchmark().endsWith("countBatch")) count = ns;
            else encode = ns;
        }
        double perRow = count / ROWS_PER_BATCH;
        System.out.printf(
                "%ncounting: %.1f ns per batch of %d rows = %.2f ns per row; encoding one row: %.0f ns;"
                        + " counting / encoding = %.3f%% (goal: under 1%% of the copy's CPU per row, of which"
                        + " encoding is a part)%n",
                count, ROWS_PER_BATCH, perRow, encode, 100 * perRow / encode);
    }
}
