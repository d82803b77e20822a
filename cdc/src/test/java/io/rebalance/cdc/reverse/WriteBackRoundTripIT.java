package io.rebalance.cdc.reverse;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.codec.ColumnSpec;
import io.rebalance.core.codec.RowCodec;
import io.rebalance.core.codec.RowDecoder;
import io.rebalance.core.codec.SourceRow;
import io.rebalance.core.config.ConfigLoader;
import io.rebalance.core.config.ConfigValidator;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.dynamo.TargetTable;
import io.rebalance.core.source.PageReader;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.testkit.ItemComparison;
import io.rebalance.testkit.SharedServices;
import io.rebalance.testkit.TypeZoo;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Every TypeZoo row through the whole rollback path: Postgres row, item (as DynamoDB stores and normalizes it),
 * decoded row, upsert into an empty twin table. The twin must hold the same values as the original, and its rows
 * must encode to the very items DynamoDB holds, so a verification after a rollback finds nothing to report.
 */
class WriteBackRoundTripIT {
    final SharedServices services = SharedServices.get();

    @ParameterizedTest
    @ValueSource(strings = {"map", "string"})
    void everyZooRowComesBackValueForValue(String json) throws Exception {
        String original = SharedServices.unique("zoo");
        String twin = original + "_twin";
        List<String> ids;
        try (Connection c = services.postgres();
                Statement st = c.createStatement()) {
            ids = TypeZoo.create(c, original, 1);
            st.execute(String.format(TypeZoo.DDL, twin));
        }
        MigrationConfig config = ConfigValidator.validate(new ConfigLoader(Map.of())
                .load(
                        null,
                        Map.of(
                                "source.jdbcUrl",
                                services.jdbcUrl,
                                "source.table",
                                original,
                                "target.table",
                                original,
                                "target.json",
                                json,
                                "target.endpoint",
                                services.dynamo.endpoint(),
                                "redis.url",
                                services.redisUrl)));
        try (Connection c = new SourceSession(config.source()).open();
                DynamoDbClient dynamo = services.dynamoClient()) {
            SourceTable source = SourceTable.inspect(c, config);
            SourceTable twinTable =
                    new SourceTable("public." + twin, source.columns(), source.key(), source.keyspace());
            TargetTable.create(dynamo, original, source.key(), SlotIndex.of(config.target()));
            RowCodec codec = source.codec(config.target());
            RowDecoder decoder = source.decoder(config.target());
            for (SourceRow row : new PageReader(source).byKeys(c, ids)) {
                dynamo.putItem(b -> b.tableName(original).item(codec.encode(row)));
            }

            List<String[]> decoded = new ArrayList<>();
            for (String id : ids) decoded.add(decoder.decode(stored(dynamo, original, id)));
            c.setAutoCommit(false);
            new RowWriteBack(twinTable).upsert(c, decoded);
            c.commit();

            // value for value, json compared as jsonb (DynamoDB keeps neither key order nor spacing of a map)
            TreeSet<String> differences = new TreeSet<>();
            for (ColumnSpec col : source.columns()) {
                String a = value("a", col), b = value("b", col);
                try (ResultSet rs = c.createStatement()
                        .executeQuery("SELECT a.id FROM " + original + " a JOIN " + twin + " b USING (id) WHERE " + a
                                + " IS DISTINCT FROM " + b)) {
                    while (rs.next()) differences.add("row " + ids.indexOf(rs.getString(1)) + " " + col.name());
                }
            }
            c.commit();
            // With json as a map, a JSON null was stored as DynamoDB's NULL, the same as SQL NULL (RowDecoder says so)
            assertThat(differences)
                    .isEqualTo(json.equals("map") ? new TreeSet<>(List.of("row 1 ajb", "row 3 j")) : new TreeSet<>());

            // and the twin's rows encode to the items DynamoDB holds: what the verifier compares
            SourceTable twinAsSource =
                    new SourceTable("public." + twin, source.columns(), source.key(), source.keyspace());
            for (SourceRow row : new PageReader(twinAsSource).byKeys(c, ids)) {
                if (json.equals("map")
                        && (row.key().equals(ids.get(1)) || row.key().equals(ids.get(3)))) continue;
                List<String> diffs = new ArrayList<>();
                ItemComparison.compare("", codec.encode(row), stored(dynamo, original, row.key()), diffs);
                assertThat(diffs).as("row " + ids.indexOf(row.key())).isEmpty();
            }
            c.commit();

            new RowWriteBack(twinTable).delete(c, List.of(ids.get(0), ids.get(2)));
            c.commit();
            try (ResultSet rs = c.createStatement().executeQuery("SELECT count(*) FROM " + twin)) {
                rs.next();
                assertThat(rs.getInt(1)).isEqualTo(ids.size() - 2);
            }
            c.commit();
        }
    }

    private static String value(String alias, ColumnSpec col) {
        String ref = alias + "." + col.name();
        if (col.kind() == io.rebalance.core.codec.ColumnKind.JSON) return col.array() ? ref : ref + "::jsonb";
        return ref;
    }

    private static Map<String, AttributeValue> stored(DynamoDbClient dynamo, String table, String id) {
        return dynamo.getItem(b -> b.tableName(table)
                        .key(Map.of("id", AttributeValue.fromS(id)))
                        .consistentRead(true))
                .item();
    }
}
