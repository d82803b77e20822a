package io.rebalance.ops;

import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.slot.KeyType;
import io.rebalance.core.source.PartRows;
import io.rebalance.core.source.SourceTable;
import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.fence.FenceState;
import io.rebalance.protocol.fence.FenceWriter;
import io.rebalance.protocol.fence.PartFenceTrigger;
import io.rebalance.protocol.fence.PostgresFence;
import io.rebalance.protocol.part.PartMap;
import io.rebalance.protocol.part.PartRule;
import io.rebalance.protocol.route.RouteStatus;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * Which scope a command acts on: the table's, or one part's ({@code --part}) when the table moves part by part; and
 * the refusal of parts that differ from those a move is under way with.
 *
 * @param base the table's scope ({@code cutover.scope}, or the target table)
 * @param part the part named, or null for the whole table
 */
public record PartChoice(String base, PartMap parts, String part) {
    /** The scope the command acts on: {@code base/part}, or {@code base}. */
    public String scope() {
        return part == null ? base : PartMap.scope(base, part);
    }

    public boolean parted() {
        return parts.parted();
    }

    /**
     * @param part {@code --part}'s value, or null
     * @param partRequired whether the command acts on one part of a parted table (a cutover, rollback, window close,
     *     recovery or dry run); a command over every part (prepare, status) takes none
     * @param routes a part's scope to its route's status, for the refusal's message; empty when not prepared
     * @throws RebalanceException {@link ErrorCode#PART_UNKNOWN} for a part the table does not have, a part on a table
     *     without parts, or none where one is required
     */
    public static PartChoice of(
            MigrationConfig config, String part, boolean partRequired, Function<String, Optional<RouteStatus>> routes) {
        String base = config.cutover().scope();
        PartMap parts = config.cutover().partMap();
        if (part != null && !parts.parted()) {
            throw new RebalanceException(
                    ErrorCode.PART_UNKNOWN,
                    "--part " + part + ": " + base + " has no parts (cutover.parts is empty) and moves whole; leave"
                            + " --part out, or give the table its parts in cutover.parts (docs/cutover.md, Moving"
                            + " part by part). Nothing was changed.");
        }
        if (part != null && parts.part(part).isEmpty()) {
            throw new RebalanceException(
                    ErrorCode.PART_UNKNOWN,
                    "--part " + part + ": " + base + " has no such part; its parts are " + routesOf(base, parts, routes)
                            + ". Name one of them. Nothing was changed.");
        }
        if (part == null && partRequired && parts.parted()) {
            throw new RebalanceException(
                    ErrorCode.PART_UNKNOWN,
                    base + " moves part by part: name the part with --part; its parts are "
                            + routesOf(base, parts, routes) + ". Nothing was changed.");
        }
        return new PartChoice(base, parts, part);
    }

    private static String routesOf(String base, PartMap parts, Function<String, Optional<RouteStatus>> routes) {
        List<String> each = parts.names().stream()
                .map(n -> n + " ("
                        + routes.apply(PartMap.scope(base, n)).map(Enum::name).orElse("not prepared") + ")")
                .toList();
        return String.join(", ", each);
    }

    /** The rows of the part chosen, or every row when the command acts on the whole table. */
    public PartRows rows(SourceTable table) {
        if (part == null) return PartRows.ALL;
        return PartRows.of(parts, table.key(), partitionColumn(table), Set.of(part));
    }

    /**
     * The partition-key column the parts' rules read, quoted: the key's first column.
     *
     * @throws RebalanceException CONFIG_INVALID when a range of numbers would compare a text or uuid column
     */
    public String partitionColumn(SourceTable table) {
        String column = table.key().columns().get(0);
        KeyType type = table.key().types().get(0);
        for (int i = 0; i < parts.parts().size(); i++) {
            if (parts.parts().get(i).rule() instanceof PartRule.NumberRange && type != KeyType.BIGINT) {
                throw new RebalanceException(
                        ErrorCode.CONFIG_INVALID,
                        "cutover.parts[" + i + "] ('" + parts.parts().get(i).name() + "') is a range of numbers, but "
                                + table.name() + "'s partition-key column " + column + " is "
                                + type.name().toLowerCase(Locale.ROOT)
                                + ": write its bounds as strings (compared by code point), or use values. Nothing"
                                + " was changed.");
            }
        }
        return "\"" + column.replace("\"", "\"\"") + "\"";
    }

    /**
     * Refuses parts that differ from those the table is moving under: parts recorded on the fences with a part away
     * from SOURCE, or a table moving whole (its own fence away from SOURCE) given parts.
     *
     * @throws RebalanceException {@link ErrorCode#PARTS_CHANGED}; nothing is changed
     */
    public void refuseChanged(Connection pg, PostgresFence fence) throws SQLException {
        Optional<PartFenceTrigger.Recorded> recorded = fence.trigger().parts().recorded(pg, base);
        if (recorded.isPresent()
                && recorded.get().moving()
                && !recorded.get().parts().equals(parts.written())) {
            throw PartFenceTrigger.changed(base, recorded.get(), parts.written());
        }
        Optional<FenceState> whole = fence.find(pg, base);
        if (parts.parted()
                && whole.isPresent()
                && (whole.get().route() != RouteStatus.SOURCE || whole.get().writer() != FenceWriter.APP)) {
            throw new RebalanceException(
                    ErrorCode.PARTS_CHANGED,
                    "cutover.parts gives " + base + " the parts " + parts.written() + ", but the table is moving whole"
                            + " (its route is " + whole.get().route() + "): finish or roll back that move first, or"
                            + " leave cutover.parts empty. Nothing was changed.");
        }
    }
}
