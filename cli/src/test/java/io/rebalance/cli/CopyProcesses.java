package io.rebalance.cli;

import io.rebalance.core.dynamo.SlotIndex;
import io.rebalance.core.dynamo.TargetTable;
import io.rebalance.core.slot.KeyType;
import io.rebalance.testkit.SharedServices;
import java.io.File;
import java.util.ArrayList;
import java.util.List;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;

/** `rebalance copy` processes from the shaded jar, started as a user starts them, and the table they copy into. */
final class CopyProcesses {
    private CopyProcesses() {}

    /**
     * {@code java ... -Xmx512m -jar target/rebalance.jar copy --no-progress --no-concurrent-writers FLAGS} (see
     * {@link ShadedJar}), its output in {@code target/LOG.log}.
     */
    static Process start(String log, List<String> flags) throws Exception {
        List<String> cmd = ShadedJar.java("512m");
        cmd.addAll(List.of("copy", "--no-progress", "--no-concurrent-writers"));
        cmd.addAll(flags);
        return new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(new File("target/" + log + ".log"))
                .start();
    }

    /** {@code --set KEY=VALUE} for each of {@code settings}. */
    static List<String> settings(String... settings) {
        List<String> flags = new ArrayList<>();
        for (String s : settings) flags.addAll(List.of("--set", s));
        return flags;
    }

    /** The DynamoDB table of a room_events copy, with its slot index. */
    static void createTarget(SharedServices services, String table) {
        try (DynamoDbClient d = services.dynamoClient()) {
            TargetTable.create(d, table, "id", KeyType.TEXT, new SlotIndex("by_slot", "_slot"));
        }
    }
}
