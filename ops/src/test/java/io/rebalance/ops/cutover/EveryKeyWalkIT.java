package io.rebalance.ops.cutover;

import static org.assertj.core.api.Assertions.assertThat;

import io.rebalance.core.codec.RowCodec;
import io.rebalance.core.codec.SourceRow;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.dynamo.TargetTable;
import io.rebalance.core.source.PageReader;
import io.rebalance.core.source.SourceSession;
import io.rebalance.core.source.SourceTable;
import io.rebalance.ops.Connections;
import io.rebalance.testkit.TestMigration;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The rollback's comparison of every key (an incomplete log of written keys) walks Postgres' keys a page at a time.
 * The key was selected as text and ordered by its bare name, which sorts by that text output column: bigint keys came
 * in text order ({@code 10, 100, 1000, 11, 9}) while the next page started after the last key by value, so {@code 11}
 * and {@code 9} were never compared, and rows an application deleted in DynamoDB under TARGET would have been kept.
 */
class EveryKeyWalkIT {
    @Test
    void everyPostgresKeyIsComparedWhateverItsLength() throws Exception {
        try (TestMigration m = new TestMigration("walk")) {
            MigrationConfig config = m.config();
            try (Connection pg = new SourceSession(config.source()).open();
                    Statement st = pg.createStatement()) {
                st.execute("CREATE TABLE " + m.table + " (id bigint PRIMARY KEY, body text)");
                st.execute(
                        "INSERT INTO " + m.table + " VALUES (9, 'a'), (10, 'b'), (11, 'c'), (100, 'd'), (1000, 'e')");
            }
            try (Connections c = new Connections(config, 2)) {
                SourceTable table = c.sourceTable();
                TargetTable.create(c.dynamo(), config.target().table(), table.key(), SlotIndex.of(config.target()));
                RowCodec codec = table.codec(config.target());
                try (Connection pg = new SourceSession(config.source()).open()) {
                    for (SourceRow row : new PageReader(table).byKeys(pg, List.of("10", "100", "1000"))) {
                        c.dynamo().putItem(b -> b.tableName(config.target().table())
                                .item(codec.encode(row)));
                    }
                }
                try (RollbackProof proof =
                        new RollbackProof(config, c, table, true, io.rebalance.core.source.PartRows.ALL, 2)) {
                    assertThat(proof.differing(Optional.empty(), Duration.ofSeconds(60)))
                            .containsExactlyInAnyOrder("9", "11");
                }
            } finally {
                try (Connection pg = new SourceSession(config.source()).open();
                        Statement st = pg.createStatement()) {
                    st.execute("DROP TABLE " + m.table);
                }
            }
        }
    }
}
