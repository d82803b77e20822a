package io.rebalance.verifier;

import io.rebalance.core.codec.RowCodec;
import io.rebalance.core.codec.SourceRow;
import io.rebalance.core.dynamo.BatchWriter;
import io.rebalance.core.source.PageReader;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import software.amazon.awssdk.services.dynamodb.model.DeleteRequest;
import software.amazon.awssdk.services.dynamodb.model.PutRequest;
import software.amazon.awssdk.services.dynamodb.model.WriteRequest;

/**
 * {@code verify --repair}: re-copies exactly the ids that differ. Each id is read from Postgres again now; a row
 * that exists is encoded by the same codec as the copy and put, an id without a row is deleted. Nothing else in
 * the table is touched.
 */
final class Repairer {
    private final PageReader reader;
    private final RowCodec codec;
    private final SlotItems items;
    private final BatchWriter writer;

    Repairer(PageReader reader, RowCodec codec, SlotItems items, BatchWriter writer) {
        this.reader = reader;
        this.codec = codec;
        this.items = items;
        this.writer = writer;
    }

    /** @return how many ids were written or deleted */
    int repair(Connection c, List<Difference> differences) throws Exception {
        List<String> ids = differences.stream().map(Difference::id).toList();
        List<SourceRow> rows = reader.byKeys(c, ids);
        Set<String> withRow = new HashSet<>();
        List<WriteRequest> requests = new ArrayList<>();
        for (SourceRow row : rows) {
            withRow.add(row.key());
            requests.add(WriteRequest.builder()
                    .putRequest(PutRequest.builder().item(codec.encode(row)).build())
                    .build());
        }
        for (Difference d : differences) {
            if (withRow.contains(d.id())) continue;
            requests.add(WriteRequest.builder()
                    .deleteRequest(DeleteRequest.builder()
                            .key(Map.of(items.partitionKey(), items.key(d.id())))
                            .build())
                    .build());
        }
        writer.apply(requests);
        return requests.size();
    }
}
