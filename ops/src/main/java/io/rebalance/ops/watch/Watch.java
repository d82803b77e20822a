package io.rebalance.ops.watch;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.rebalance.cdc.Tail;
import io.rebalance.cdc.TailStats;
import io.rebalance.core.config.MigrationConfig;
import io.rebalance.core.dynamo.DynamoCounts;
import io.rebalance.core.redis.RedisConnector;
import io.rebalance.cutover.CutoverHooks;
import io.rebalance.cutover.CutoverOutcome;
import io.rebalance.mover.MoverProcess;
import io.rebalance.mover.RunState;
import io.rebalance.protocol.handoff.ReverseStatus;
import io.rebalance.protocol.route.RoutingTable;
import io.rebalance.verifier.VerificationStore;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.UnifiedJedis;

/**
 * What one long-running command shows the outside while it works (docs/operations.md): Prometheus metrics and
 * health checks on {@code metrics.port}, nothing at all when it is unset. Commands bind what they run ({@link #copy},
 * {@link #tail}, {@link #verify}, {@link #cutover}); the parts themselves know nothing of Micrometer.
 */
public final class Watch implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Watch.class);

    /** How often figures read from Redis or Postgres are refreshed, and services asked whether they answer. */
    static final Duration REFRESH = Duration.ofSeconds(2);

    /** A loop that has not ticked for this long is wedged. */
    static final Duration WEDGED_AFTER = Duration.ofSeconds(60);

    private final PrometheusMeterRegistry registry;
    private final Health health;
    private final Refresher refresher;
    private final MetricsEndpoint endpoint;
    private final List<AutoCloseable> closing = new ArrayList<>();
    private CutoverMeters cutover;
    private UnifiedJedis redis;
    private final AtomicBoolean started = new AtomicBoolean();

    private Watch(PrometheusMeterRegistry registry, Health health, Refresher refresher, MetricsEndpoint endpoint) {
        this.registry = registry;
        this.health = health;
        this.refresher = refresher;
        this.endpoint = endpoint;
        if (health != null) // not ready before the command has checked its services and bound what it runs
        health.ready(
                    "started",
                    () -> started.get()
                            ? Health.Result.up("the command runs")
                            : Health.Result.down("the command is starting: it checks its services and plans first"));
    }

    /** Nothing served, nothing counted: {@code metrics.port} is unset. */
    public static Watch off() {
        return new Watch(null, null, null, null);
    }

    /**
     * Serves metrics and health on {@code metrics.port} when it is set (logging the port, which 0 picks), else {@link
     * #off()}.
     *
     * @throws io.rebalance.protocol.RebalanceException PORT_IN_USE when the port cannot be served on
     */
    public static Watch start(MigrationConfig config, String command) {
        if (config.metrics().portNumber().isEmpty()) return off();
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        registry.config()
                .commonTags(
                        "command",
                        command,
                        "prefix", // the run's name, as status gives it
                        config.mover().coordinatedByPostgres()
                                ? config.coordinator().schema()
                                : config.redis().keyspace().prefix());
        Health health = new Health().live("threads", Watch::noDeadlock);
        Refresher refresher = new Refresher(REFRESH);
        int port = config.metrics().portNumber().getAsInt();
        MetricsEndpoint endpoint;
        try {
            endpoint = MetricsEndpoint.start(port, "metrics.port", registry, health);
        } catch (RuntimeException e) {
            refresher.close();
            registry.close();
            throw e;
        }
        Watch w = new Watch(registry, health, refresher, endpoint);
        try {
            w.bindProcess();
        } catch (RuntimeException e) {
            w.close();
            throw e;
        }
        log.info("metrics on http://0.0.0.0:{}/metrics, health on /health/live and /health/ready", endpoint.port());
        return w;
    }

    private void bindProcess() {
        new ClassLoaderMetrics().bindTo(registry);
        new JvmMemoryMetrics().bindTo(registry);
        JvmGcMetrics gc = new JvmGcMetrics();
        gc.bindTo(registry);
        closing.add(gc);
        new JvmThreadMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        new FileDescriptorMetrics().bindTo(registry);
        DynamoCounts dynamo = DynamoCounts.process();
        FunctionCounter.builder("rebalance.dynamodb.throttled", dynamo, DynamoCounts::throttled)
                .description("Attempts DynamoDB refused as throttled (each is retried)")
                .register(registry);
        FunctionCounter.builder("rebalance.dynamodb.unprocessed.items", dynamo, DynamoCounts::unprocessedItems)
                .description("Items BatchWriteItem handed back unprocessed (each is resubmitted)")
                .register(registry);
    }

    public boolean on() {
        return registry != null;
    }

    /** The port served on; -1 when off. */
    public int port() {
        return on() ? endpoint.port() : -1;
    }

    /**
     * The copy's series and checks: live while its heartbeat loop ticks, ready while its services answer (Redis and
     * Postgres; Postgres alone with {@code mover.coordinator: postgres}).
     *
     * @param run the run's state, as the process's coordinator keeps it
     */
    public void copy(MoverProcess process, MigrationConfig config, RunState run) {
        if (!on()) return;
        CopyMeters.bind(
                registry, refresher, process, run, config.mover().leaseTtl().toMillis());
        health.live("loop", () -> ticking("heartbeat", process.counters()::lastTickMs));
        services(config);
        started.set(true);
    }

    /** The tail's series and checks: live while its loop ticks, ready only while it holds the lease and streams. */
    public void tail(Tail tail, MigrationConfig config) {
        if (!on()) return;
        TailStats stats = tail.stats();
        TailMeters.bind(
                registry,
                refresher,
                stats,
                new ReverseStatus(redis(config), config.redis().keyspace().handoff()),
                new RoutingTable(redis(config), config.redis().keyspace()),
                config.cutover().partMap().scopes(config.cutover().scope()));
        health.live("loop", () -> ticking("tail loop", stats::lastTickMs));
        health.ready(
                "lease",
                () -> stats.active()
                        ? Health.Result.up("holds the tail lease and streams")
                        : Health.Result.down("stands by: another tail holds the lease, or Redis is away"));
        started.set(true);
    }

    /** Verification's series and checks: ready while its services answer. @param results where results are kept */
    public void verify(MigrationConfig config, VerificationStore results) {
        if (!on()) return;
        VerifyMeters.bind(registry, refresher, results);
        services(config);
        started.set(true);
    }

    /** The cutover's series, measured by hooks around {@code inner}; ready while Redis and Postgres answer. */
    public CutoverHooks cutover(CutoverHooks inner, MigrationConfig config) {
        if (!on()) return inner;
        cutover = new CutoverMeters(registry, inner);
        services(config);
        started.set(true);
        return cutover;
    }

    /** The cutover command ended: its exact step durations and write-blocked time. */
    public void cutoverDone(CutoverOutcome outcome) {
        if (cutover != null) cutover.done(outcome);
    }

    /** Its own small pool: a refresh never waits behind the workers' connections, nor they behind it. */
    private UnifiedJedis redis(MigrationConfig config) {
        if (redis == null) {
            redis = RedisConnector.connect(config.redis(), 2);
            closing.add(redis);
        }
        return redis;
    }

    /** Readiness: Postgres answers, and Redis, or the coordinator's Postgres when it is another database. */
    private void services(MigrationConfig config) {
        boolean redis = !config.mover().coordinatedByPostgres();
        ServiceProbe probe = new ServiceProbe(redis ? redis(config) : null, config.source(), REFRESH.multipliedBy(3));
        closing.add(probe);
        if (redis) ask("redis", probe::askRedis, probe::redis);
        ask("postgres", probe::askPostgres, probe::postgres);
        if (!redis && !config.coordinator().jdbcUrl().isEmpty()) {
            ServiceProbe coordinator =
                    new ServiceProbe(null, config.coordinator().at(config.source()), REFRESH.multipliedBy(3));
            closing.add(coordinator);
            ask("coordinator", coordinator::askPostgres, coordinator::postgres);
        }
    }

    /** A thread each: a service that hangs neither delays another's answer nor the figures. */
    private void ask(String name, Runnable ask, Supplier<Health.Result> answer) {
        Refresher asker = new Refresher(REFRESH);
        closing.add(asker);
        asker.every(name, ask);
        health.ready(name, answer);
    }

    private static Health.Result ticking(String loop, LongSupplier lastTickMs) {
        long age = System.currentTimeMillis() - lastTickMs.getAsLong();
        return age < WEDGED_AFTER.toMillis()
                ? Health.Result.up(loop + " ran " + age + " ms ago")
                : Health.Result.down(loop + " has not run for " + age + " ms");
    }

    private static Health.Result noDeadlock() {
        long[] stuck = ManagementFactory.getThreadMXBean().findDeadlockedThreads();
        return stuck == null
                ? Health.Result.up("no deadlocked threads")
                : Health.Result.down(stuck.length + " threads deadlocked");
    }

    /** The registry, for tests and benchmarks; null when off. */
    public MeterRegistry registry() {
        return registry;
    }

    @Override
    public void close() {
        if (!on()) return;
        endpoint.close();
        refresher.close();
        for (AutoCloseable c : closing) {
            try {
                c.close();
            } catch (Exception ignored) {
                // closing on the way out
            }
        }
        registry.close();
    }
}
