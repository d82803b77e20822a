package io.rebalance.core.copy;

import io.rebalance.core.codec.RowCodec;
import io.rebalance.core.codec.RowRefusedException;
import io.rebalance.core.codec.SourceRow;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.BatchWriter;
import io.rebalance.core.dynamo.LandedPastLease;
import io.rebalance.core.dynamo.WritePacer;
import io.rebalance.core.refused.RefusedRows;
import io.rebalance.core.retry.Retrier;
import io.rebalance.core.source.PageReader;
import io.rebalance.core.source.SourceTable;
import io.rebalance.protocol.lease.LeaseLost;
import io.rebalance.protocol.lease.WriteFence;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.DeleteRequest;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * The one way rows become items: the rows of some keys are read as Postgres holds them now and put (encoded by the one
 * codec), a key without a row is deleted, every call bound to the writer's fence, paced, cut into batches in one place
 * ({@link BatchWriter#batches}) and retried in one layer, and an item DynamoDB refuses is set apart so the others
 * land. The copy's pages, the change stream, reconciliation and {@code verify --repair} all write through this, so
 * that one rule decides what an item is (ADR 6).
 *
 * <p>It is split in {@link #read} and {@link #write} so a caller can act between the two (the tail records which
 * slots it is about to write before it writes them).
 */
public final class ItemWriter {
    private final PageReader reader;
    private final RowCodec codec;
    private final BatchWriter writer;

    public ItemWriter(PageReader reader, RowCodec codec, BatchWriter writer) {
        this.reader = reader;
        this.codec = codec;
        this.writer = writer;
    }

    /** Writes for {@code table}'s rows into {@code target}, unpaced, each call retried as {@code retrier} says. */
    public static ItemWriter of(
            SourceTable table, MigrationConfig.Target target, DynamoDbClient dynamo, Retrier retrier) {
        return new ItemWriter(
                new PageReader(table),
                table.codec(target),
                new BatchWriter(dynamo, target.table(), BatchWriter.MAX_BATCH, retrier, WritePacer.NONE));
    }

    /** {@code requests} in the batches one call sends: a caller that spreads them over threads sends these. */
    public List<List<WriteRequest>> batches(List<WriteRequest> requests) {
        return writer.batches(requests);
    }

    /**
     * @param rows the keys that have a row, with the row as read
     * @param absent the keys without a row (deleted in Postgres)
     * @param requests one put or delete per distinct key, none for a refused one
     * @param refused the rows DynamoDB cannot hold as mapped: nothing is written for them, the caller records them
     */
    public record Refresh(
            List<SourceRow> rows,
            List<String> absent,
            List<WriteRequest> requests,
            List<RowRefusedException> refused) {}

    /** Reads the current rows of {@code keys} (duplicates collapse) and builds one write per key; writes nothing. */
    public Refresh read(Connection c, Collection<String> keys) throws SQLException {
        Set<String> distinct = new LinkedHashSet<>(keys);
        List<SourceRow> rows = reader.byKeys(c, distinct);
        Set<String> withRow = new HashSet<>();
        List<WriteRequest> requests = new ArrayList<>(distinct.size());
        List<RowRefusedException> refused = new ArrayList<>();
        for (SourceRow row : rows) {
            withRow.add(row.key());
            try {
                requests.add(BatchWriter.put(codec.encode(row)));
            } catch (RowRefusedException e) {
                refused.add(e); // one row DynamoDB cannot hold must not hold up the others
            }
        }
        List<String> absent = new ArrayList<>();
        for (String key : distinct) {
            if (withRow.contains(key)) continue;
            absent.add(key);
            requests.add(WriteRequest.builder()
                    .deleteRequest(DeleteRequest.builder().key(codec.key(key)).build())
                    .build());
        }
        return new Refresh(rows, absent, requests, refused);
    }

    /**
     * Sends a refresh's writes with BatchWriteItem (its keys are distinct, as one batch requires).
     *
     * @return the rows DynamoDB itself refused (see {@link #write(List, WriteFence)})
     */
    public List<RowRefusedException> write(Refresh refresh) throws InterruptedException {
        return write(refresh.requests(), WriteFence.NONE);
    }

    /**
     * Sends part of a refresh's writes (callers that spread one refresh over several threads), bound to the writer's
     * lease when it holds one (ADR 6). A batch DynamoDB refuses as invalid (ValidationException: a permanent error
     * of one item, such as one the codec let through that DynamoDB still cannot hold) is written again one item at a
     * time, so the others land and only the invalid ones are returned, never retried.
     *
     * @return the rows DynamoDB refused, each with DynamoDB's reason
     */
    public List<RowRefusedException> write(List<WriteRequest> requests, WriteFence fence) throws InterruptedException {
        try {
            return send(requests, fence);
        } catch (LandedPastLease e) {
            throw e.lost();
        }
    }

    /**
     * As {@link #write(List, WriteFence)}; a batch that may have landed after the lease passed ({@link
     * LandedPastLease}: the process paused after its last check) has its keys written again at once as {@code source}
     * holds them now, so no row read before the pause outlives it; then the loss is thrown as usual.
     *
     * @throws IllegalStateException when those keys could not be written again: the message names the next step
     */
    public List<RowRefusedException> write(List<WriteRequest> requests, WriteFence fence, Connection source)
            throws InterruptedException {
        try {
            return send(requests, fence);
        } catch (LandedPastLease e) {
            List<String> keys = new ArrayList<>();
            for (WriteRequest r : e.requests())
                keys.add(codec.keyText(
                        r.putRequest() != null
                                ? r.putRequest().item()
                                : r.deleteRequest().key()));
            try {
                send(read(source, keys).requests(), WriteFence.NONE); // read now, write now: as the tail does
            } catch (SQLException | RuntimeException failed) {
                throw new IllegalStateException(
                        e.getMessage() + ", and writing its keys again failed (" + failed.getMessage() + "): run"
                                + " `rebalance verify --all --repair` once the copy is done",
                        failed);
            }
            throw new LeaseLost(
                    e.lost().holder(),
                    e.lost().getMessage() + "; a batch sent before the loss was seen may have landed after it, so its "
                            + keys.size() + " keys were written again as Postgres holds them now");
        }
    }

    private List<RowRefusedException> send(List<WriteRequest> requests, WriteFence fence) throws InterruptedException {
        try {
            writer.apply(requests, fence);
            return List.of();
        } catch (DynamoDbException e) {
            if (!invalid(e)) throw e;
        }
        List<RowRefusedException> refused = new ArrayList<>();
        for (WriteRequest r : requests) {
            try {
                writer.apply(List.of(r), fence);
            } catch (DynamoDbException e) {
                if (!invalid(e)) throw e;
                Map<String, AttributeValue> item = r.putRequest() != null
                        ? r.putRequest().item()
                        : r.deleteRequest().key();
                refused.add(new RowRefusedException(
                        codec.keyText(item),
                        null,
                        null,
                        "DynamoDB refused the item: " + e.awsErrorDetails().errorMessage(),
                        null));
            }
        }
        return refused;
    }

    private static boolean invalid(DynamoDbException e) {
        return e.statusCode() == 400
                && e.awsErrorDetails() != null
                && "ValidationException".equals(e.awsErrorDetails().errorCode());
    }

    /**
     * {@link #read} then {@link #write}, recording the rows DynamoDB cannot hold in {@code refused} (as met by
     * {@code by}) and taking the keys written off it. @return how many keys were put or deleted
     */
    public int refresh(Connection c, Collection<String> keys, RefusedRows refused, String by)
            throws SQLException, InterruptedException {
        Refresh r = read(c, keys);
        refused.record(r.refused(), by, key -> null);
        List<RowRefusedException> byDynamo = write(r);
        refused.record(byDynamo, by, key -> null);
        Set<String> notWritten = new HashSet<>();
        for (RowRefusedException e : r.refused()) notWritten.add(e.key());
        for (RowRefusedException e : byDynamo) notWritten.add(e.key());
        List<String> landed = new ArrayList<>();
        for (String key : new LinkedHashSet<>(keys)) if (!notWritten.contains(key)) landed.add(key);
        refused.clear(landed);
        return r.requests().size();
    }

    /**
     * {@link #read} then {@link #write}; @return how many keys were put or deleted
     *
     * @throws RowRefusedException the first refused row, once every other key is written
     */
    public int refresh(Connection c, Collection<String> keys) throws SQLException, InterruptedException {
        Refresh r = read(c, keys);
        List<RowRefusedException> byDynamo = write(r);
        if (!r.refused().isEmpty()) throw r.refused().get(0);
        if (!byDynamo.isEmpty()) throw byDynamo.get(0);
        return r.requests().size();
    }
}
