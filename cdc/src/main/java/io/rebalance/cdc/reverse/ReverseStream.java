package io.rebalance.cdc.reverse;

import io.rebalance.protocol.handoff.ReverseDrain;
import io.rebalance.protocol.handoff.ReverseStatus;
import io.rebalance.protocol.keyspace.HandoffKeys;
import io.rebalance.protocol.route.RouteStatus;
import io.rebalance.protocol.route.RoutingTable;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.UnifiedJedis;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ExpiredIteratorException;
import software.amazon.awssdk.services.dynamodb.model.GetRecordsResponse;
import software.amazon.awssdk.services.dynamodb.model.Record;
import software.amazon.awssdk.services.dynamodb.model.Shard;
import software.amazon.awssdk.services.dynamodb.model.ShardIteratorType;
import software.amazon.awssdk.services.dynamodb.model.TrimmedDataAccessException;
import software.amazon.awssdk.services.dynamodb.streams.DynamoDbStreamsClient;

/**
 * The reverse stream (ADR 7, point 6): reads the target table's DynamoDB Stream shard by shard, parents before
 * children, and hands each batch of records to {@link ReverseApplier}, which writes Postgres while a cutover has
 * made DynamoDB the store of record and skips otherwise. Positions (the last sequence number per shard, or END) are
 * saved in Redis after each batch is written, so a restarted tail resumes where the last one stopped; a batch
 * written twice writes the same current values.
 *
 * <p>Runs in the tail process under the tail's lease, in rounds: a round reads every shard up to its current end.
 * A round that began after rollback's drain request answers it ({@link ReverseDrain}). Once the route is
 * {@code FINAL} (the rollback window closed), it stops reading.
 */
final class ReverseStream {
    private static final Logger log = LoggerFactory.getLogger(ReverseStream.class);
    private static final String END = "END";
    private static final long DESCRIBE_EVERY_MS = 10_000;
    /** How often a long round says it is alive: well inside the 5 s a rollback allows a report to age. */
    private static final long ALIVE_EVERY_MS = 1_000;

    private final DynamoDbClient dynamo;
    private final DynamoDbStreamsClient streams;
    private final String targetTable;
    private final UnifiedJedis redis;
    private final HandoffKeys keys;
    private final ReverseDrain drain;
    private final ReverseStatus status;
    private final RoutingTable routes;
    /** The table's scope, or its parts': the stream closes once every one is FINAL. */
    private final List<String> scopes;

    private final ReverseApplier applier;
    private final Map<String, String> iterators = new HashMap<>();
    private final AtomicLong applied = new AtomicLong();
    private final AtomicLong skipped = new AtomicLong();
    private String streamArn;
    private List<Shard> shards;
    private long describedMs;
    private boolean describeDue = true;
    private boolean streaming;
    private boolean waited;
    private long reportedMs;

    ReverseStream(
            DynamoDbClient dynamo,
            DynamoDbStreamsClient streams,
            String targetTable,
            UnifiedJedis redis,
            HandoffKeys keys,
            RoutingTable routes,
            List<String> scopes,
            ReverseApplier applier) {
        this.dynamo = dynamo;
        this.streams = streams;
        this.targetTable = targetTable;
        this.redis = redis;
        this.keys = keys;
        this.drain = new ReverseDrain(redis, keys);
        this.status = new ReverseStatus(redis, keys);
        this.routes = routes;
        this.scopes = scopes;
        this.applier = applier;
    }

    /**
     * Reads every shard to its current end once.
     *
     * @return records read (0: caught up, or nothing to read)
     */
    int round() throws Exception {
        String drainId = drain.pending(); // read first: only a round begun after the request may answer it
        streaming = false;
        waited = false;
        if (scopes.stream().allMatch(scope -> routes.get(scope)
                .map(r -> r.status() == RouteStatus.FINAL)
                .orElse(false))) {
            publish("closed", 0);
            return 0;
        }
        if (!streamFound()) {
            publish("off", 0);
            return 0;
        }
        streaming = true;
        long now = System.currentTimeMillis();
        if (describeDue || drainId != null || now - describedMs > DESCRIBE_EVERY_MS) describe();
        Map<String, String> positions = new HashMap<>(redis.hgetAll(keys.reverseShards()));
        int read = 0;
        long oldestMs = 0;
        Set<String> known = new HashSet<>();
        for (Shard s : shards) known.add(s.shardId());
        boolean progress = true;
        Set<String> done = new HashSet<>();
        while (progress) { // parents first: a key's records continue in the child only after the parent closed
            progress = false;
            for (Shard s : shards) {
                String id = s.shardId();
                if (done.contains(id) || END.equals(positions.get(id))) continue;
                String parent = s.parentShardId();
                if (parent != null && known.contains(parent) && !END.equals(positions.get(parent))) continue;
                ShardRead r = readShard(id, positions);
                read += r.records;
                if (r.creationMs > 0) oldestMs = oldestMs == 0 ? r.creationMs : Math.min(oldestMs, r.creationMs);
                done.add(id);
                progress = true;
            }
        }
        publish(waited ? "waiting" : "streaming", read == 0 ? 0 : Math.max(0, System.currentTimeMillis() - oldestMs));
        if (waited) return 0; // a round that left records unread answers no drain; the next round reads them again
        if (drainId != null) drain.answer(drainId);
        return read;
    }

    /** How long to wait after a round that read nothing: short while a stream is read (a rollback waits on it). */
    long idleWaitMs() {
        if (waited) return 250; // until the forward tail is held: it acknowledges at its next batch
        return streaming ? 20 : 1_000;
    }

    /** Forgets in-memory iterators after a failure, so the next round resumes from the saved positions. */
    void reset() {
        iterators.clear();
        describeDue = true;
    }

    private record ShardRead(int records, long creationMs) {}

    private ShardRead readShard(String shardId, Map<String, String> positions) throws Exception {
        String it = iterators.get(shardId);
        int records = 0;
        long creationMs = 0;
        boolean fresh = false;
        while (true) {
            if (it == null) {
                it = iterator(shardId, positions.get(shardId));
                fresh = true;
            }
            GetRecordsResponse r;
            try {
                String at = it;
                r = streams.getRecords(b -> b.shardIterator(at).limit(1000));
            } catch (ExpiredIteratorException e) {
                it = null; // iterators live 15 minutes; take a new one at the saved position
                continue;
            } catch (TrimmedDataAccessException e) {
                iterators.remove(shardId);
                if (!fresh) { // DynamoDB Local also says this of an iterator taken while its shard was empty
                    it = null;
                    continue;
                }
                if (positions.get(shardId) == null) return new ShardRead(records, creationMs); // nothing read: retry
                gap(shardId, positions.get(shardId)); // a fresh iterator after our position: records really are gone
                positions.remove(shardId);
                redis.hdel(keys.reverseShards(), shardId);
                it = null;
                continue;
            }
            fresh = false;
            alive();
            List<Record> batch = r.records();
            if (!batch.isEmpty()) {
                List<Map<String, AttributeValue>> changed = new ArrayList<>(batch.size());
                for (Record rec : batch) changed.add(rec.dynamodb().keys());
                ReverseApplier.Outcome outcome = applier.apply(changed);
                if (outcome == ReverseApplier.Outcome.WAITING) {
                    // the gate may open for these records (the forward tail is not held yet): keep the position
                    // before them, and take a new iterator there next round
                    iterators.remove(shardId);
                    waited = true;
                    return new ShardRead(records, creationMs);
                }
                if (outcome == ReverseApplier.Outcome.APPLIED) applied.addAndGet(batch.size());
                else skipped.addAndGet(batch.size());
                alive();
                Record last = batch.get(batch.size() - 1);
                positions.put(shardId, last.dynamodb().sequenceNumber());
                redis.hset(keys.reverseShards(), shardId, last.dynamodb().sequenceNumber());
                Instant created = batch.get(0).dynamodb().approximateCreationDateTime();
                if (created != null && creationMs == 0) creationMs = created.toEpochMilli();
                records += batch.size();
            }
            it = r.nextShardIterator();
            if (it == null) { // closed and read to its end: its children take over
                positions.put(shardId, END);
                redis.hset(keys.reverseShards(), shardId, END);
                iterators.remove(shardId);
                describeDue = true;
                return new ShardRead(records, creationMs);
            }
            iterators.put(shardId, it);
            if (batch.isEmpty()) return new ShardRead(records, creationMs);
        }
    }

    private String iterator(String shardId, String afterSequence) {
        return streams.getShardIterator(b -> {
                    b.streamArn(streamArn).shardId(shardId);
                    if (afterSequence == null) b.shardIteratorType(ShardIteratorType.TRIM_HORIZON);
                    else
                        b.shardIteratorType(ShardIteratorType.AFTER_SEQUENCE_NUMBER)
                                .sequenceNumber(afterSequence);
                })
                .shardIterator();
    }

    /**
     * Records past the stream's 24-hour retention are gone: if any was an application write, Postgres lacks it, so
     * status says so and rollback refuses (docs/cutover.md).
     */
    private void gap(String shardId, String position) {
        log.error(
                "the reverse stream lost records of shard {} after position {}: they passed DynamoDB Streams'"
                        + " retention before this tail read them; rollback is refused until the migration is verified"
                        + " again",
                shardId,
                position);
        status.gap(shardId, position);
    }

    private boolean streamFound() {
        long now = System.currentTimeMillis();
        if (streamArn != null && now - describedMs <= DESCRIBE_EVERY_MS) return true;
        var table = dynamo.describeTable(b -> b.tableName(targetTable)).table();
        boolean enabled = table.streamSpecification() != null
                && Boolean.TRUE.equals(table.streamSpecification().streamEnabled());
        String arn = enabled ? table.latestStreamArn() : null;
        if (arn != null && !arn.equals(status.streamArn())) {
            redis.del(keys.reverseShards()); // a new stream: the old one's shard positions mean nothing in it
            status.streamArn(arn);
            iterators.clear();
            describeDue = true;
        }
        streamArn = arn;
        if (arn == null) describedMs = now;
        return arn != null;
    }

    private void describe() {
        List<Shard> all = new ArrayList<>();
        String start = null;
        do {
            String from = start;
            var d = streams.describeStream(b -> b.streamArn(streamArn).exclusiveStartShardId(from))
                    .streamDescription();
            all.addAll(d.shards());
            start = d.lastEvaluatedShardId();
        } while (start != null);
        shards = all;
        describedMs = System.currentTimeMillis();
        describeDue = false;
    }

    /**
     * A round that failed: the state says {@code failing}, with the error and since when, and the report is fresh,
     * so status and a rollback's refusal name the error instead of taking the stream for idle or gone.
     */
    void failed(Exception e) {
        status.failed(firstLine(e.toString()));
    }

    private static String firstLine(String s) {
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    /**
     * Refreshes the report when the round has run a while since the last one. The first round of this process (after a
     * restart, one that may read the whole stream again from its trim horizon) reports itself streaming in full, so
     * neither a stale state nor an earlier failure of a stopped process stands for it.
     */
    private void alive() {
        long now = System.currentTimeMillis();
        if (now - reportedMs < ALIVE_EVERY_MS) return;
        if (reportedMs == 0) {
            publish(waited ? ReverseStatus.WAITING : ReverseStatus.STREAMING, 0);
            return;
        }
        status.alive(applied.get(), skipped.get());
        reportedMs = now;
    }

    private void publish(String state, long lagMs) {
        reportedMs = System.currentTimeMillis();
        status.round(
                state,
                lagMs,
                applied.get(),
                skipped.get(),
                shards == null ? 0 : shards.size(),
                waited ? applier.waitingFor() : "");
    }
}
