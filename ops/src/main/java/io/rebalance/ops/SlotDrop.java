package io.rebalance.ops;

import io.rebalance.cdc.TailPreflight;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.source.SourceSession;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.keyspace.TailKeys;
import java.sql.Connection;
import java.sql.Statement;
import java.util.function.Consumer;

/**
 * {@code rebalance tail --drop-slot}: the tail's replication slot, publication and saved offsets gone, after the
 * cutover or to start over. Refused while a tail holds the lease or anything reads the slot.
 */
public final class SlotDrop {
    private SlotDrop() {}

    /** @param say told each thing done, one line each */
    public static void run(MigrationConfig config, Connections c, Consumer<String> say) throws Exception {
        TailKeys keys = config.redis().keyspace().tail();
        String slotName = config.tail().slotName();
        String holder = c.redis().get(keys.lease());
        if (holder != null) {
            throw new RebalanceException(
                    ErrorCode.REPLICATION_SLOT_BUSY,
                    "tail " + holder + " holds the lease and reads slot " + slotName
                            + "; stop it first (Ctrl-C or SIGTERM), then run tail --drop-slot again");
        }
        try (Connection pg = new SourceSession(config.source()).openForPreflight();
                Statement st = pg.createStatement()) {
            var slot = TailPreflight.slot(pg, slotName);
            if (slot.active()) {
                throw new RebalanceException(
                        ErrorCode.REPLICATION_SLOT_BUSY,
                        "replication slot " + slotName + " is read by process " + slot.activePid()
                                + "; stop that reader first");
            }
            if (slot.exists()) {
                st.execute("SELECT pg_drop_replication_slot('" + slotName + "')");
                say.accept("dropped replication slot " + slotName);
            } else {
                say.accept("replication slot " + slotName + " does not exist");
            }
            st.execute("DROP PUBLICATION IF EXISTS \"" + config.tail().publication() + "\"");
            say.accept("dropped publication " + config.tail().publication() + " (if it existed)");
        }
        c.redis().del(keys.offsets());
        say.accept("forgot the saved offsets; a new tail starts from a new slot (copy and verify again after it)");
    }
}
