package io.rebalance.core.config;

import io.rebalance.core.codec.ColumnForms;
import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.part.PartMap;
import io.rebalance.protocol.part.PartSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;

/**
 * One migration, as described by YAML + environment + flags (see {@link ConfigLoader} and docs/config.md).
 * Every field is non-null after loading: defaults come from {@code defaults.yaml}, so what the code reads is
 * exactly what the documentation lists. Optional values are empty strings, never null.
 */
public record MigrationConfig(
        Source source,
        Slots slots,
        Target target,
        Redis redis,
        Mover mover,
        Coordinator coordinator,
        Verify verify,
        Tail tail,
        Cutover cutover,
        Metrics metrics,
        Log log) {

    /**
     * The defaults that depend on other keys, resolved here once: {@code target.table} empty is the source table's
     * name without its schema, and {@code cutover.scope} empty is {@code target.table}.
     */
    public MigrationConfig {
        if (target != null && source != null && target.table().isEmpty()) target = target.named(source.bareTable());
        if (cutover != null && target != null && cutover.scope().isEmpty()) cutover = cutover.withScope(target.table());
    }

    /** This configuration with other slot settings. */
    public MigrationConfig withSlots(Slots other) {
        return new MigrationConfig(
                source, other, target, redis, mover, coordinator, verify, tail, cutover, metrics, log);
    }

    /**
     * Where rows come from. {@code columns} empty means every column of the table. The row key is {@code keyColumns}
     * (one or two columns), or, empty, the table's primary key ({@code source.keyColumn}, its old spelling for one
     * column, is still read: {@link ConfigLoader}).
     */
    public record Source(
            String jdbcUrl, String user, String password, String table, List<String> keyColumns, List<String> columns) {
        /** The same settings for another server of the source (a replica, one host of several). */
        public Source at(String otherJdbcUrl) {
            return new Source(otherJdbcUrl, user, password, table, keyColumns, columns);
        }

        @Override
        public String toString() { // never print the password
            return "Source[jdbcUrl=" + Redact.url(jdbcUrl) + ", user=" + user + ", table=" + table + ", keyColumns="
                    + keyColumns + ", columns=" + columns + "]";
        }

        /** The key columns the configuration names: empty means the table's primary key. */
        public List<String> namedKey() {
            return keyColumns;
        }

        /** The table's name without its schema: what {@code target.table} defaults to. */
        String bareTable() {
            return table.substring(table.indexOf('.') + 1);
        }
    }

    /**
     * How a row maps to a slot: an hour from the time inside its id ({@code timeFrom: id}, a ULID or a time-ordered
     * bigint) or from a timestamp column ({@code timeFrom: column}), or, where nothing tells time ({@code timeFrom:
     * none}), a range of the primary key planned to hold about {@code rowsPerSlot} rows; {@code from}/{@code to} bound
     * an hourly run (ISO-8601 instants, to exclusive); empty means found from the table's min/max.
     */
    public record Slots(
            TimeFrom timeFrom,
            IdFormat idFormat,
            String timeColumn,
            Snowflake snowflake,
            String from,
            String to,
            long rowsPerSlot) {

        public boolean fromColumn() {
            return timeFrom == TimeFrom.COLUMN;
        }

        /** Slots are ranges of the primary key: nothing in a row tells time. */
        public boolean keyRanges() {
            return timeFrom == TimeFrom.NONE;
        }

        /** These settings with {@code timeFrom: none} (no window: ranges hold every key). */
        public Slots asKeyRanges() {
            return new Slots(TimeFrom.NONE, idFormat, timeColumn, snowflake, "", "", rowsPerSlot);
        }

        public Instant fromInstant() {
            return from.isEmpty() ? null : Instant.parse(from);
        }

        public Instant toInstant() {
            return to.isEmpty() ? null : Instant.parse(to);
        }
    }

    /** Bit layout of a time-ordered bigint id: [timestamp | shard | sequence], timestamp in ms since epochMillis. */
    public record Snowflake(long epochMillis, int timestampBits, int shardBits, int sequenceBits) {
        public int shift() {
            return shardBits + sequenceBits;
        }
    }

    /**
     * The DynamoDB side. {@code endpoint}: empty for AWS, an http(s) URL (DynamoDB Local, a VPC endpoint), or
     * {@code embedded} (DynamoDB Local in this process, the demo's only). {@code region}, {@code profile} and the
     * static keys are as the AWS SDK reads them; empty means its default chains ({@link
     * io.rebalance.core.dynamo.DynamoClients}). {@code partitionKey} empty means the source key's (first)
     * column; {@code sortKey}, for a two-column key, empty means its second column's name.
     * Every item carries its slot in {@code slotAttribute}, and the global secondary index {@code slotIndex}
     * (partition key the slot, sort key the item's key) lets the verifier read one slot without scanning the table
     * (docs/fingerprint.md). {@code jsonAsString} and {@code numbersAsString} name columns stored as their text
     * (docs/codec.md).
     */
    public record Target(
            String table,
            String endpoint,
            String region,
            String profile,
            String accessKeyId,
            String secretAccessKey,
            String partitionKey,
            String sortKey,
            JsonForm json,
            List<String> jsonAsString,
            List<String> numbersAsString,
            String slotAttribute,
            String slotIndex,
            int slotShards,
            long warmWriteUnits) {
        public boolean embedded() {
            return "embedded".equals(endpoint);
        }

        /** These settings for another DynamoDB table. */
        public Target named(String other) {
            return new Target(
                    other,
                    endpoint,
                    region,
                    profile,
                    accessKeyId,
                    secretAccessKey,
                    partitionKey,
                    sortKey,
                    json,
                    jsonAsString,
                    numbersAsString,
                    slotAttribute,
                    slotIndex,
                    slotShards,
                    warmWriteUnits);
        }

        @Override
        public String toString() { // never print the secret key
            return "Target[table=" + table + ", endpoint=" + endpoint + ", region=" + region + ", profile=" + profile
                    + ", accessKeyId=" + accessKeyId + "]";
        }

        public boolean jsonAsMap() {
            return json == JsonForm.MAP;
        }

        /** The columns stored in another form than their kind's: the way out for refused rows (docs/codec.md). */
        public ColumnForms forms() {
            return new ColumnForms(jsonAsMap(), Set.copyOf(jsonAsString), Set.copyOf(numbersAsString));
        }
    }

    /**
     * Where the run's state lives. Every key starts with {@code prefix}. {@code mode} says what {@code url}'s hosts
     * are ({@link RedisAddress} reads them); the passwords are secrets, masked wherever the configuration is shown.
     * {@code durable} says Redis keeps every acknowledged write through a restart by a means INFO cannot show (MemoryDB's
     * transaction log).
     */
    public record Redis(
            String url,
            String prefix,
            RedisMode mode,
            String sentinelMaster,
            String password,
            String sentinelPassword,
            boolean durable) {
        /** The run's keys: the one place a key is built from {@code prefix}. */
        public Keyspace keyspace() {
            return new Keyspace(prefix);
        }

        @Override
        public String toString() {
            return "Redis[url=" + Redact.url(url) + ", prefix=" + prefix + ", mode=" + mode.text()
                    + (sentinelMaster.isEmpty() ? "" : ", sentinelMaster=" + sentinelMaster)
                    + (durable ? ", durable" : "") + ']';
        }
    }

    /**
     * The copy: threads per process, page and batch sizes, the run's limits (rows/s and DynamoDB write units/s, 0 =
     * none), timings, and where its processes coordinate ({@code redis} or {@code postgres}, see {@link Coordinator}).
     */
    public record Mover(
            int workers,
            int pageSize,
            int batchSize,
            long rateLimit,
            long writeUnits,
            Duration leaseTtl,
            Duration stateTtl,
            Duration slotRetryDelay,
            Duration keeperInterval,
            CoordinatorKind coordinator) {

        /** Whether the copy is coordinated through Postgres tables instead of Redis. */
        public boolean coordinatedByPostgres() {
            return coordinator == CoordinatorKind.POSTGRES;
        }
    }

    /**
     * Where a copy with {@code mover.coordinator: postgres} keeps its state: the tables of {@code schema} in the
     * database at {@code jdbcUrl} (the source's when empty), with {@code source.user} and its password.
     */
    public record Coordinator(String schema, String jdbcUrl) {
        public Coordinator {
            jdbcUrl = jdbcUrl == null ? "" : jdbcUrl; // `jdbcUrl: ~` in YAML means empty
        }

        @Override
        public String toString() { // a URL may carry a password
            return "Coordinator[schema=" + schema + ", jdbcUrl=" + Redact.url(jdbcUrl) + "]";
        }

        /** The connection settings of the coordinator's database. */
        public Source at(Source source) {
            return jdbcUrl.isEmpty() ? source : source.at(jdbcUrl);
        }
    }

    /**
     * {@code rebalance verify}: slots checked at once, how long a difference may be in flight before it counts, and
     * where the fingerprints are read.
     *
     * @param jdbcUrl a hot standby of the source to read fingerprints from, with {@code source.user} and its password;
     *     empty reads the source itself
     */
    public record Verify(int parallel, Duration settle, String jdbcUrl) {
        public Verify {
            jdbcUrl = jdbcUrl == null ? "" : jdbcUrl; // `jdbcUrl: ~` in YAML means empty
        }

        @Override
        public String toString() { // a URL may carry a password
            return "Verify[parallel=" + parallel + ", settle=" + Durations.format(settle) + ", jdbcUrl="
                    + Redact.url(jdbcUrl) + "]";
        }

        /** The source connection settings with the URL fingerprints are read from. */
        public Source reads(Source source) {
            return jdbcUrl.isEmpty() ? source : source.at(jdbcUrl);
        }
    }

    /**
     * {@code rebalance tail}: the Debezium change stream.
     *
     * @param slotName the Postgres logical replication slot (it keeps WAL until the tail confirms it)
     * @param publication the pgoutput publication, created for the source table only
     * @param leaseTtl how long the active tail's lease lives without renewal; a standby takes over after it
     * @param heartbeat how often the tail confirms its position even while the table is idle
     * @param retentionWarnMb WAL the slot may hold back before status warns
     * @param applyThreads BatchWriteItem calls in flight for one batch of changes
     * @param maxBatch changes Debezium hands over at most at once
     * @param pollInterval how long Debezium waits for more changes before handing over a batch
     */
    public record Tail(
            String slotName,
            String publication,
            Duration leaseTtl,
            Duration heartbeat,
            long retentionWarnMb,
            int applyThreads,
            int maxBatch,
            Duration pollInterval) {}

    /**
     * {@code rebalance cutover} and the reverse stream (ADR 7, docs/cutover.md).
     *
     * @param scope the name applications guard their writes under; {@code target.table} where the configuration
     *     leaves it empty (resolved once, when the configuration is built)
     * @param pgFence the fence table in the source database, schema-qualified
     * @param dynamoFence the DynamoDB fence table
     * @param dynamoFenceStripes the items a scope's DynamoDB fence gets at {@code --prepare} (ADR 19): 1, or more for a
     *     scope whose guarded writes to DynamoDB run concurrently at a rate one item cannot take
     * @param maxWriteBlock the longest the cutover may block writes; past it, it aborts (before the flip)
     * @param maxTailLag pre-check: the forward tail may be at most this far behind
     * @param verifyMaxAge pre-check: every slot needs a MATCH no older than this
     * @param applicationRoles the Postgres roles applications write the table as: {@code --prepare} grants them
     *     SELECT on the fence table and refuses while any of them could change it (reopen the fence)
     * @param shadowWindow pre-check, off at 0: the applications' shadow reads of the last this long compared at
     *     least {@code shadowMinReads} reads, none a mismatch
     * @param shadowMinReads the reads {@code shadowWindow} must hold compared
     */
    public record Cutover(
            String scope,
            String pgFence,
            String dynamoFence,
            int dynamoFenceStripes,
            Duration maxWriteBlock,
            Duration maxTailLag,
            Duration verifyMaxAge,
            List<String> applicationRoles,
            List<PartSpec> parts,
            Duration shadowWindow,
            int shadowMinReads) {
        public Cutover {
            parts = parts == null ? List.of() : parts;
        }

        /** These settings with another scope. */
        public Cutover withScope(String other) {
            return new Cutover(
                    other,
                    pgFence,
                    dynamoFence,
                    dynamoFenceStripes,
                    maxWriteBlock,
                    maxTailLag,
                    verifyMaxAge,
                    applicationRoles,
                    parts,
                    shadowWindow,
                    shadowMinReads);
        }

        /** The table's parts ({@link PartMap#WHOLE} for none); call after {@link ConfigValidator} accepted them. */
        public PartMap partMap() {
            return PartMap.of(parts);
        }
    }

    /**
     * The metrics and health endpoint of the long-running commands (docs/operations.md): {@code port} empty for none,
     * {@code 0} for a free port (logged), else the port. Text because "unset" must differ from every number.
     */
    public record Metrics(String port) {
        /** The port to serve on, empty when metrics are off. */
        public OptionalInt portNumber() {
            return port.isBlank() ? OptionalInt.empty() : OptionalInt.of(Integer.parseInt(port.trim()));
        }
    }

    /** How log lines are written: {@code text} (one line each) or {@code json} (one JSON object each). */
    public record Log(LogForm format) {
        public boolean json() {
            return format == LogForm.JSON;
        }
    }
}
