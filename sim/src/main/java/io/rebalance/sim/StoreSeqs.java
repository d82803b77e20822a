package io.rebalance.sim;

import io.rebalance.core.codec.RowCodec;
import io.rebalance.core.source.SourceSession;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/** The simulated table's seq in either store: whole, to compare the stores, or one event's, for a read. */
final class StoreSeqs {
    /** Items per scan call. */
    private static final int PAGE = 2_000;

    private final SourceSession session;
    private final String table;
    private final DynamoDbClient dynamo;
    private final String targetTable;
    private final RowCodec codec;

    StoreSeqs(SourceSession session, String table, DynamoDbClient dynamo, String targetTable, RowCodec codec) {
        this.session = session;
        this.table = table;
        this.dynamo = dynamo;
        this.targetTable = targetTable;
        this.codec = codec;
    }

    /** A connection named for the simulator, so a session it leaves behind is seen in pg_stat_activity. */
    Connection open() throws SQLException {
        Connection c = session.open();
        c.setClientInfo("ApplicationName", AppSimulator.APPLICATION_NAME);
        return c;
    }

    /** @return null, for the field that held {@code c} */
    static Connection closeQuietly(Connection c) {
        if (c == null) return null;
        try {
            c.close();
        } catch (SQLException ignored) {
            // already broken: that is why it is closed
        }
        return null;
    }

    /** Every event's seq in Postgres, read in one query. */
    Map<String, Long> postgres() throws SQLException {
        Map<String, Long> out = new HashMap<>();
        try (Connection c = session.open();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT id, seq FROM " + table)) {
            while (rs.next()) out.put(rs.getString(1), rs.getLong(2));
        }
        return out;
    }

    /** Every item's seq in DynamoDB: a consistent scan. */
    Map<String, Long> dynamo() {
        String key = codec.key("0").keySet().iterator().next();
        Map<String, Long> out = new HashMap<>();
        dynamo.scanPaginator(b -> b.tableName(targetTable)
                        .consistentRead(true)
                        // short pages: on 2 busy cores, DynamoDB Local left an unlimited page of 200,000 items
                        // unanswered past the client's 30 s call timeout, and the other calls on the table with it
                        .limit(PAGE)
                        .projectionExpression("#k, #s")
                        .expressionAttributeNames(Map.of("#k", key, "#s", AppSimulator.SEQ)))
                .items()
                .forEach(item -> out.put(
                        item.get(key).s(),
                        Long.parseLong(item.get(AppSimulator.SEQ).n())));
        return out;
    }

    /** One event's seq in Postgres, on the caller's connection; null when there is no row. */
    Long postgres(Connection pg, String id) throws SQLException {
        try (PreparedStatement ps = pg.prepareStatement("SELECT seq FROM " + table + " WHERE id = ?")) {
            ps.setString(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) : null;
            }
        }
    }

    /** One event's seq in DynamoDB, read consistently; null when there is no item. */
    Long dynamo(String id) {
        Map<String, AttributeValue> item = dynamo.getItem(
                        b -> b.tableName(targetTable).key(codec.key(id)).consistentRead(true))
                .item();
        return item == null || item.isEmpty()
                ? null
                : Long.parseLong(item.get(AppSimulator.SEQ).n());
    }
}
