package io.rebalance.sim;

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

/** Every row's seq of {@link TenantSimulator}'s table in either store, by {@code tenant:id}. */
final class TenantStores {
    private TenantStores() {}

    static Map<String, Long> postgres(SourceSession session, String table) throws SQLException {
        Map<String, Long> out = new HashMap<>();
        try (Connection c = session.open();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT tenant_id, id, seq FROM " + table)) {
            while (rs.next()) out.put(TenantSimulator.key(rs.getInt(1), rs.getLong(2)), rs.getLong(3));
        }
        return out;
    }

    /** One row's seq, or null when it has none. */
    static Long seq(Connection c, String table, int tenant, long id) throws SQLException {
        try (PreparedStatement ps =
                c.prepareStatement("SELECT seq FROM " + table + " WHERE tenant_id = ? AND id = ?")) {
            ps.setInt(1, tenant);
            ps.setLong(2, id);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) : null;
            }
        }
    }

    /** One item's seq, read consistently, or null when there is none. */
    static Long seq(DynamoDbClient dynamo, String table, Map<String, AttributeValue> key) {
        var r = dynamo.getItem(b -> b.tableName(table).key(key).consistentRead(true));
        return r.hasItem() ? Long.parseLong(r.item().get("seq").n()) : null;
    }

    /** A consistent scan. */
    static Map<String, Long> dynamo(DynamoDbClient dynamo, String table) {
        Map<String, Long> out = new HashMap<>();
        Map<String, AttributeValue> start = null;
        do {
            Map<String, AttributeValue> from = start;
            var page = dynamo.scan(b -> b.tableName(table).consistentRead(true).exclusiveStartKey(from));
            for (Map<String, AttributeValue> item : page.items()) {
                out.put(
                        TenantSimulator.key(
                                Integer.parseInt(item.get("tenant_id").n()),
                                Long.parseLong(item.get("id").n())),
                        Long.parseLong(item.get("seq").n()));
            }
            start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey() : null;
        } while (start != null);
        return out;
    }
}
