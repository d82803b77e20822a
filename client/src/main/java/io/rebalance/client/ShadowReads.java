package io.rebalance.client;

import io.rebalance.protocol.keyspace.Keyspace;
import io.rebalance.protocol.route.Target;
import io.rebalance.protocol.shadow.ShadowLog;
import io.rebalance.protocol.shadow.ShadowMismatch;
import io.rebalance.protocol.shadow.ShadowOutcome;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.UnifiedJedis;

/**
 * The other store's read of a sampled read, run and compared off the application's request path: {@link Router} hands
 * over the route's answer and both reads, and returns at once. A bounded queue of waiting comparisons (one more is
 * skipped, not waited for), a timeout on each shadow read (a slow store makes errors here, not latency there), and the
 * outcome counted in Redis ({@link ShadowLog}, for {@code rebalance status} and {@code rebalance shadow}) and told to
 * a {@link ShadowListener} ({@link ShadowMeters}). Answers that differ are both read again, once, before they count as
 * a mismatch: a write between the two reads makes them differ too. One per application, shared by its routers.
 */
public final class ShadowReads implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ShadowReads.class);

    /** The characters of each answer's form a mismatch keeps. */
    static final int FORM_KEPT = 2_000;

    private final ShadowLog record;
    private final ShadowSettings settings;
    private final ShadowListener listener;
    private final ThreadPoolExecutor comparers;
    /** Runs each shadow read, so that one slower than the timeout can be given up. */
    private final ExecutorService readers;
    /** Skipped reads not yet counted in Redis, by scope: counted by the next comparison, off the request path. */
    private final Map<String, AtomicLong> skipped = new ConcurrentHashMap<>();

    private final AtomicLong handedOver = new AtomicLong();

    /** With {@link ShadowSettings#defaults()}, telling no listener. */
    public ShadowReads(UnifiedJedis redis, String prefix) {
        this(redis, prefix, ShadowSettings.defaults(), ShadowListener.NONE);
    }

    /** @param prefix the run's {@code redis.prefix} */
    public ShadowReads(UnifiedJedis redis, String prefix, ShadowSettings settings, ShadowListener listener) {
        this.record = new ShadowLog(redis, new Keyspace(prefix));
        this.settings = settings;
        this.listener = listener;
        this.comparers = new ThreadPoolExecutor(
                settings.threads(),
                settings.threads(),
                0,
                TimeUnit.MILLISECONDS,
                new ArrayBlockingQueue<>(settings.queue()),
                daemons("rebalance-shadow"));
        this.readers = Executors.newFixedThreadPool(settings.threads(), daemons("rebalance-shadow-read"));
    }

    /**
     * A read {@link Router#read} sampled: the route's answer, the store it came from, both reads, and the form answers
     * are compared by.
     */
    record Sampled<T>(
            String scope,
            String key,
            Target read,
            T answer,
            Callable<T> postgres,
            Callable<T> dynamo,
            Function<? super T, String> form) {
        Callable<T> same() {
            return read == Target.POSTGRES ? postgres : dynamo;
        }

        Callable<T> other() {
            return read == Target.POSTGRES ? dynamo : postgres;
        }
    }

    /** Compares, later and on another thread, the route's answer with the other store's. Never blocks, never throws. */
    <T> void compare(Sampled<T> sampled) {
        handedOver.incrementAndGet();
        try {
            comparers.execute(() -> run(sampled));
        } catch (RejectedExecutionException full) {
            skipped.computeIfAbsent(sampled.scope(), s -> new AtomicLong()).incrementAndGet();
            tell(sampled.scope(), ShadowOutcome.SKIPPED);
        }
    }

    private <T> void run(Sampled<T> s) {
        String scope = s.scope();
        String key = s.key();
        ShadowOutcome outcome;
        ShadowMismatch mismatch = null;
        try {
            if (formOf(s.form(), s.answer()).equals(formOf(s.form(), timed(s.other())))) {
                outcome = ShadowOutcome.MATCH;
            } else {
                // a write between the two reads makes them differ too: both are read again, once
                String again = formOf(s.form(), timed(s.same()));
                String otherAgain = formOf(s.form(), timed(s.other()));
                if (again.equals(otherAgain)) {
                    outcome = ShadowOutcome.MATCH;
                } else {
                    outcome = ShadowOutcome.MISMATCH;
                    boolean pgFirst = s.read() == Target.POSTGRES;
                    mismatch = new ShadowMismatch(
                            key,
                            clip(pgFirst ? again : otherAgain),
                            clip(pgFirst ? otherAgain : again),
                            System.currentTimeMillis());
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return; // closing
        } catch (Exception e) {
            outcome = ShadowOutcome.ERROR;
            log.debug("shadow read of {} in {} failed: {}", key, scope, e.toString());
        }
        try {
            record.record(scope, outcome, mismatch, 1);
            for (Map.Entry<String, AtomicLong> e : skipped.entrySet()) {
                long n = e.getValue().getAndSet(0);
                if (n == 0) continue;
                try {
                    record.record(e.getKey(), ShadowOutcome.SKIPPED, null, n);
                } catch (RuntimeException failed) {
                    e.getValue().addAndGet(n); // counted by a later comparison
                    throw failed;
                }
            }
        } catch (RuntimeException e) { // Redis away: the counters in the application's registry still count
            log.warn(
                    "shadow read of {} in {}: its outcome ({}) could not be recorded in Redis: {}",
                    key,
                    scope,
                    outcome.wire(),
                    e.toString());
        }
        tell(scope, outcome); // after Redis: a listener's count is also Redis' (tests wait on it)
    }

    /** Tells the listener, which must not fail the application's read (this may run on its thread). */
    private void tell(String scope, ShadowOutcome outcome) {
        try {
            listener.outcome(scope, outcome);
        } catch (RuntimeException e) {
            log.debug("the shadow listener failed: {}", e.toString());
        }
    }

    /** A form as kept in Redis: a row of hundreds of KB a thousand times over would fill it. */
    static String clip(String form) {
        return form.length() <= FORM_KEPT
                ? form
                : form.substring(0, FORM_KEPT) + "... (" + (form.length() - FORM_KEPT) + " more characters)";
    }

    private <T> T timed(Callable<T> read) throws Exception {
        Future<T> f = readers.submit(read);
        try {
            return f.get(settings.timeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            f.cancel(true);
            throw e;
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception x ? x : e;
        }
    }

    private static <T> String formOf(Function<? super T, String> form, T answer) {
        return answer == null ? ShadowMismatch.ABSENT : form.apply(answer);
    }

    private static ThreadFactory daemons(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }

    /** The sampled reads handed over so far: compared, being compared, waiting, or skipped. */
    public long handedOver() {
        return handedOver.get();
    }

    /** Stops comparing: sampled reads waiting are dropped, shadow reads running are interrupted. */
    @Override
    public void close() {
        comparers.shutdownNow();
        readers.shutdownNow();
    }
}
