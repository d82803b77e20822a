package io.rebalance.core.config;

import io.rebalance.protocol.ErrorCode;
import io.rebalance.protocol.RebalanceException;
import io.rebalance.protocol.fence.DynamoFence;
import io.rebalance.protocol.part.PartMap;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Checks the meaning of a configuration before anything connects or writes. All problems are reported at once,
 * each naming the key, the value seen and what to write instead. Checks that need a service (does the table
 * exist?) are in the preflight of each command, not here.
 */
public final class ConfigValidator {
    private static final Pattern IDENT = Pattern.compile("[A-Za-z_][A-Za-z0-9_$]*");
    private static final Pattern TABLE = Pattern.compile("([A-Za-z_][A-Za-z0-9_$]*\\.)?[A-Za-z_][A-Za-z0-9_$]*");

    private final List<String> problems = new ArrayList<>();
    private final List<String> rangeProblems = new ArrayList<>();

    private ConfigValidator() {}

    /** @throws RebalanceException CONFIG_INVALID or TIME_RANGE_INVALID listing every problem found */
    public static MigrationConfig validate(MigrationConfig c) {
        ConfigValidator v = new ConfigValidator();
        v.check(c);
        if (!v.problems.isEmpty()) {
            v.problems.addAll(v.rangeProblems);
            throw new RebalanceException(
                    ErrorCode.CONFIG_INVALID, "invalid configuration:\n  - " + String.join("\n  - ", v.problems));
        }
        if (!v.rangeProblems.isEmpty()) {
            throw new RebalanceException(ErrorCode.TIME_RANGE_INVALID, String.join("\n", v.rangeProblems));
        }
        return c;
    }

    /** Every problem {@link #validate} would name, for a report that lists them with others. */
    static List<String> problems(MigrationConfig c) {
        ConfigValidator v = new ConfigValidator();
        v.check(c);
        List<String> all = new ArrayList<>(v.problems);
        all.addAll(v.rangeProblems);
        return all;
    }

    private void check(MigrationConfig c) {
        var s = c.source();
        require(
                s.jdbcUrl().startsWith("jdbc:postgresql:"),
                "source.jdbcUrl",
                Redact.url(s.jdbcUrl()), // a URL that is wrong may still carry a password
                "a JDBC URL like jdbc:postgresql://127.0.0.1:5432/postgres");
        if (s.table().isEmpty()) {
            problems.add("source.table is not set; name the table to move, optionally schema-qualified, like"
                    + " public.orders (in the config file, REBALANCE_SOURCE_TABLE or --set source.table=...)");
        } else {
            require(
                    TABLE.matcher(s.table()).matches(),
                    "source.table",
                    s.table(),
                    "a table name, optionally schema-qualified, like public.orders");
        }
        for (String col : s.keyColumns()) {
            require(IDENT.matcher(col).matches(), "source.keyColumns", col, "plain column names");
        }
        if (s.keyColumns().size() > 2
                || s.keyColumns().stream().distinct().count() < s.keyColumns().size()) {
            problems.add("source.keyColumns " + s.keyColumns() + " names "
                    + s.keyColumns().size() + " columns;"
                    + " a key has one or two distinct columns (DynamoDB's partition key and sort key)");
        }
        for (String col : s.columns()) {
            require(IDENT.matcher(col).matches(), "source.columns", col, "plain column names");
        }
        for (String key : s.namedKey()) {
            if (!s.columns().isEmpty() && !s.columns().contains(key)) {
                problems.add("source.columns " + s.columns() + " leaves out the key column '" + key
                        + "'; add it, or leave source.columns empty to copy every column");
            }
        }

        var sl = c.slots();
        require(
                sl.rowsPerSlot() == 0 || sl.rowsPerSlot() >= 1_000,
                "slots.rowsPerSlot",
                String.valueOf(sl.rowsPerSlot()),
                "rows a key range is planned to hold (slots.timeFrom: none), at least 1000; 0 (the default) for"
                        + " 100000, or fewer so that a table has at least 64 ranges");
        if (sl.keyRanges() && (!sl.from().isEmpty() || !sl.to().isEmpty())) {
            problems.add("slots.from/slots.to bound hours, and with slots.timeFrom: none slots are key ranges covering"
                    + " every key; leave slots.from and slots.to empty");
        }
        if (sl.fromColumn()) {
            require(
                    IDENT.matcher(sl.timeColumn()).matches(),
                    "slots.timeColumn",
                    sl.timeColumn(),
                    "the timestamp column that places a row in its hour (needed because slots.timeFrom is column)");
        }
        var sf = sl.snowflake();
        int bits = sf.timestampBits() + sf.shardBits() + sf.sequenceBits();
        // 64 is allowed: with 41/13/10 the sign bit is the timestamp's top bit, clear for ~35 years after the epoch.
        if (sf.timestampBits() < 30 || sf.shardBits() < 0 || sf.sequenceBits() < 0 || bits > 64) {
            problems.add("slots.snowflake bits " + sf.timestampBits() + "/" + sf.shardBits() + "/" + sf.sequenceBits()
                    + " do not fit a bigint; timestampBits >= 30 and the three must add up to at most 64"
                    + " (for example 41/13/10)");
        }
        require(
                sf.epochMillis() >= 0,
                "slots.snowflake.epochMillis",
                String.valueOf(sf.epochMillis()),
                "milliseconds since 1970, >= 0");
        Instant from = instant("slots.from", sl.from());
        Instant to = instant("slots.to", sl.to());
        if (from != null && to != null && !from.isBefore(to)) {
            rangeProblems.add(
                    "time range is inverted or empty: slots.from=" + sl.from() + " is not before slots.to=" + sl.to()
                            + "; swap them (from is inclusive, to exclusive), or leave both empty to use the table's min/max");
        }

        var t = c.target();
        require(
                t.table().isEmpty() // source.table is not set (named above), and target.table is its name
                        || t.table().length() >= 3
                                && t.table().length() <= 255
                                && t.table().matches("[A-Za-z0-9_.-]+"),
                "target.table",
                t.table(),
                "a DynamoDB table name: 3-255 characters of a-z, A-Z, 0-9, _ - .");
        require(
                t.endpoint().isEmpty() || t.embedded() || t.endpoint().matches("https?://.+"),
                "target.endpoint",
                t.endpoint(),
                "'embedded', an http(s):// URL such as http://127.0.0.1:8000, or empty for AWS");
        require(
                t.region().isEmpty() || t.region().matches("[a-z0-9-]+"),
                "target.region",
                t.region(),
                "an AWS region such as eu-west-1, or empty for the SDK's (AWS_REGION, the profile's)");
        if (t.accessKeyId().isEmpty() != t.secretAccessKey().isEmpty()) {
            problems.add("target.accessKeyId and target.secretAccessKey go together: set both"
                    + " (REBALANCE_TARGET_ACCESS_KEY_ID, REBALANCE_TARGET_SECRET_ACCESS_KEY) or neither to use the"
                    + " AWS SDK's credential chain");
        }
        if (!t.profile().isEmpty() && !t.accessKeyId().isEmpty()) {
            problems.add("target.profile '" + t.profile() + "' and target.accessKeyId are both set; keep one: the"
                    + " profile's credentials or the static keys");
        }
        require(
                !t.slotAttribute().isEmpty() && t.slotAttribute().length() <= 255,
                "target.slotAttribute",
                t.slotAttribute(),
                "an attribute name, like _slot, that no source column uses");
        require(
                t.slotIndex().matches("[A-Za-z0-9_.-]{3,255}"),
                "target.slotIndex",
                t.slotIndex(),
                "an index name: 3-255 characters of a-z, A-Z, 0-9, _ - .");
        range("target.slotShards", t.slotShards(), 1, 256);
        require(
                t.warmWriteUnits() >= 0,
                "target.warmWriteUnits",
                String.valueOf(t.warmWriteUnits()),
                "write units per second the table is to take at once (its warm throughput), 0 to leave it");
        if (s.columns().contains(t.slotAttribute())
                || t.slotAttribute().equals(t.partitionKey())
                || t.slotAttribute().equals(t.sortKey())) {
            problems.add("target.slotAttribute '" + t.slotAttribute() + "' is also a column or a key attribute;"
                    + " choose another name for the slot attribute");
        }

        var r = c.redis();
        RedisAddress.problem(r).ifPresent(problems::add);
        require(
                !r.prefix().isEmpty()
                        && !r.prefix().contains("{")
                        && !r.prefix().contains("}"),
                "redis.prefix",
                r.prefix(),
                "a non-empty prefix without braces, like mgre: (braces are reserved for Redis Cluster hash tags)");

        var m = c.mover();
        range("mover.workers", m.workers(), 1, 256);
        range("mover.pageSize", m.pageSize(), 1, 100_000);
        range("mover.batchSize", m.batchSize(), 1, 25);
        require(
                m.rateLimit() >= 0,
                "mover.rateLimit",
                String.valueOf(m.rateLimit()),
                "rows per second, 0 for no limit");
        require(
                m.writeUnits() >= 0,
                "mover.writeUnits",
                String.valueOf(m.writeUnits()),
                "DynamoDB write units per second for the whole copy, 0 for no budget");
        Duration lease = m.leaseTtl();
        Duration state = m.stateTtl();
        require(
                c.coordinator().schema().matches("[a-z_][a-z0-9_]{0,62}"),
                "coordinator.schema",
                c.coordinator().schema(),
                "a Postgres schema name: lower-case letters, digits and _ (at most 63), not starting with a digit");
        require(
                c.coordinator().jdbcUrl().isEmpty() || c.coordinator().jdbcUrl().startsWith("jdbc:postgresql:"),
                "coordinator.jdbcUrl",
                Redact.url(c.coordinator().jdbcUrl()),
                "a JDBC URL like jdbc:postgresql://host:5432/postgres, or empty for the source's database");
        range("verify.parallel", c.verify().parallel(), 1, 64);
        require(
                c.verify().jdbcUrl().isEmpty() || c.verify().jdbcUrl().startsWith("jdbc:postgresql:"),
                "verify.jdbcUrl",
                Redact.url(c.verify().jdbcUrl()),
                "a JDBC URL of a hot standby of the source like jdbc:postgresql://replica:5432/postgres, or empty to"
                        + " read the source");
        var tail = c.tail();
        for (var name : new String[][] {{"tail.slotName", tail.slotName()}, {"tail.publication", tail.publication()}}) {
            require(
                    name[1].matches("[a-z0-9_]{1,63}"),
                    name[0],
                    name[1],
                    "lower-case letters, digits and _ (at most 63), as Postgres names replication slots");
        }
        range("tail.applyThreads", tail.applyThreads(), 1, 64);
        range("tail.maxBatch", tail.maxBatch(), 1, 100_000);
        require(
                tail.retentionWarnMb() > 0,
                "tail.retentionWarnMb",
                String.valueOf(tail.retentionWarnMb()),
                "megabytes > 0");
        if (tail.leaseTtl().compareTo(Duration.ofSeconds(3)) < 0) {
            problems.add("tail.leaseTtl=" + Durations.format(tail.leaseTtl())
                    + " is too short to renew reliably; use at least 3s");
        }
        var cut = c.cutover();
        require(
                cut.shadowWindow().compareTo(Duration.ofHours(24)) <= 0,
                "cutover.shadowWindow",
                Durations.format(cut.shadowWindow()),
                "a duration up to 24h (the shadow reads' counts are kept a day), or 0s for no gate");
        require(
                cut.shadowMinReads() >= 1,
                "cutover.shadowMinReads",
                Integer.toString(cut.shadowMinReads()),
                "a number of reads of at least 1");
        require(
                cut.pgFence().matches("[A-Za-z_][A-Za-z0-9_$]*(\\.[A-Za-z_][A-Za-z0-9_$]*)?"),
                "cutover.pgFence",
                cut.pgFence(),
                "a table name, schema-qualified or not, such as public.rebalance_fence");
        require(
                cut.dynamoFence().matches("[A-Za-z0-9_.-]{3,255}"),
                "cutover.dynamoFence",
                cut.dynamoFence(),
                "a DynamoDB table name (3-255 of letters, digits, _ . -)");
        require(
                cut.dynamoFenceStripes() >= 1 && cut.dynamoFenceStripes() <= DynamoFence.MAX_STRIPES,
                "cutover.dynamoFenceStripes",
                Integer.toString(cut.dynamoFenceStripes()),
                "a number of items from 1 to " + DynamoFence.MAX_STRIPES
                        + " (one TransactWriteItems sets them all, at most 100 actions); 64 for a busy scope");
        for (String role : cut.applicationRoles()) {
            require(
                    !role.isBlank() && role.length() <= 63,
                    "cutover.applicationRoles",
                    role,
                    "Postgres role names (1-63 characters) of the roles applications write as, such as [app_rw]");
        }
        problems.addAll(PartMap.problems(cut.parts(), "cutover.parts"));
        require(
                c.metrics().port().isBlank()
                        || c.metrics().port().trim().matches("\\d{1,5}")
                                && Integer.parseInt(c.metrics().port().trim()) <= 65535,
                "metrics.port",
                c.metrics().port(),
                "a TCP port 1-65535, 0 for a free one, or empty for no metrics endpoint");
        if (lease.compareTo(Duration.ofSeconds(2)) < 0) {
            problems.add("mover.leaseTtl=" + Durations.format(lease)
                    + " is too short to renew reliably; use at least 2s (15s-30s is typical)");
        }
        if (state.compareTo(lease.multipliedBy(10)) < 0) {
            problems.add("mover.stateTtl=" + Durations.format(state) + " must be far longer than mover.leaseTtl="
                    + Durations.format(lease) + "; progress would expire while a slot is still leased (7d is typical)");
        }
    }

    private void require(boolean ok, String key, String value, String expected) {
        if (!ok) problems.add(key + "='" + value + "' is not valid; expected " + expected);
    }

    private void range(String key, long value, long min, long max) {
        require(value >= min && value <= max, key, String.valueOf(value), "a number from " + min + " to " + max);
    }

    private Instant instant(String key, String value) {
        if (value.isEmpty()) return null;
        try {
            return Instant.parse(value);
        } catch (DateTimeParseException e) {
            problems.add(key + "='" + value + "' is not an instant; write it like 2024-10-20T00:00:00Z");
            return null;
        }
    }
}
