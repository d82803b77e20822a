package io.rebalance.cdc.reverse;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.codec.SourceRow;
import io.rebalance.core.config.ConfigLoader;
import io.rebalance.core.config.ConfigValidator;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.dynamo.TargetTable;
import io.rebalance.core.slot.KeyRanges;
import io.rebalance.core.source.PageReader;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.testkit.SharedServices;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * On key ranges the reverse stream gives the items an application wrote without a slot (or with another) their key's
 * range, as Postgres finds it; an item deleted before the mend stays deleted; on hours it mends nothing.
 */
class SlotMendIT {
    private final SharedServices services = SharedServices.get();

    private MigrationConfig config(String table, String timeFrom) {
        return ConfigValidator.validate(new ConfigLoader(Map.of())
                .load(
                        null,
                        Map.of(
                                "source.jdbcUrl",
                                services.jdbcUrl,
                                "source.table",
                                table,
                                "target.table",
                                table,
                                "target.endpoint",
                                services.dynamo.endpoint(),
                                "redis.url",
                                services.redisUrl,
                                "slots.timeFrom",
                                timeFrom,
                                "slots.rowsPerSlot",
                                "1000")));
    }

    @Test
    void itemsWithoutTheirRangeGetItAndADeletedOneStaysDeleted() throws Exception {
        String table = SharedServices.unique("mend");
        MigrationConfig config = config(table, "none");
        try (Connection c = new SourceSession(config.source()).open();
                Statement st = c.createStatement();
                DynamoDbClient dynamo = services.dynamoClient()) {
            st.execute("CREATE TABLE " + table + " (id uuid PRIMARY KEY, body text)");
            st.execute(
                    "INSERT INTO " + table + " SELECT gen_random_uuid(), 'row ' || i FROM generate_series(1, 3000) i");
            st.execute("ANALYZE " + table);
            SourceTable source = SourceTable.inspect(c, config).keepRanges(c);
            assertThat(source.keyspace()).isInstanceOf(KeyRanges.class);
            assertThat(((KeyRanges) source.keyspace()).count()).isEqualTo(3);
            TargetTable.create(dynamo, table, source.key(), SlotIndex.of(config.target()));
            List<String> keys = new ArrayList<>();
            try (ResultSet rs = st.executeQuery("SELECT id::text FROM " + table + " ORDER BY random() LIMIT 4")) {
                while (rs.next()) keys.add(rs.getString(1));
            }
            // as the application writes them: none, another range's, the right one (from the copy's codec), none
            Map<String, String> right = new HashMap<>();
            for (SourceRow row : new PageReader(source).byKeys(c, keys))
                right.put(row.key(), row.slot().name());
            Map<String, Map<String, AttributeValue>> items = new LinkedHashMap<>();
            for (int i = 0; i < keys.size(); i++) {
                Map<String, AttributeValue> item = new HashMap<>(source.key().dynamoKey(keys.get(i)));
                item.put("body", AttributeValue.fromS("app"));
                if (i == 1)
                    item.put(
                            "_slot",
                            AttributeValue.fromS(right.get(keys.get(i)).equals("r000000") ? "r000001" : "r000000"));
                if (i == 2) item.put("_slot", AttributeValue.fromS(right.get(keys.get(i))));
                dynamo.putItem(b -> b.tableName(table).item(item));
                items.put(keys.get(i), item);
            }
            SlotMend mend = new SlotMend(source, config.target(), dynamo);
            Map<String, String> wrong = mend.wrong(c, items);
            assertThat(wrong).containsOnlyKeys(keys.get(0), keys.get(1), keys.get(3));
            dynamo.deleteItem(b -> b.tableName(table).key(source.key().dynamoKey(keys.get(3)))); // meanwhile
            mend.set(wrong);
            for (int i = 0; i < 3; i++) {
                String k = keys.get(i);
                Map<String, AttributeValue> now = dynamo.getItem(b -> b.tableName(table)
                                .key(source.key().dynamoKey(k))
                                .consistentRead(true))
                        .item();
                assertThat(now.get("_slot").s()).as(k).isEqualTo(right.get(k));
                assertThat(now.get("body").s()).isEqualTo("app");
            }
            assertThat(dynamo.getItem(b -> b.tableName(table)
                                    .key(source.key().dynamoKey(keys.get(3)))
                                    .consistentRead(true))
                            .hasItem())
                    .as("a deleted item mended back")
                    .isFalse();

            // on hours the application writes the slot itself: nothing is mended
            SourceTable hours = SourceTable.inspect(c, config(table, "id"));
            assertThat(new SlotMend(hours, config.target(), dynamo).wrong(c, items))
                    .isEmpty();
        } finally {
            try (Connection c = services.postgres();
                    Statement st = c.createStatement()) {
                st.execute("DROP TABLE IF EXISTS " + table);
                st.execute("DROP TABLE IF EXISTS rebalance_ranges_" + table);
            }
        }
    }
}
