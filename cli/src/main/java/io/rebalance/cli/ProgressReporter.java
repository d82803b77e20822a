package io.rebalance.cli;

import io.rebalance.core.copy.CopyStatus;
import io.rebalance.core.copy.RunStatus;
import io.rebalance.mover.RunState;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Shows the run's progress as the keeper publishes it: a bar redrawn every second on a terminal, a log line every
 * ten seconds otherwise (a bar in a log file is noise). Every process shows the whole run, not just its own part.
 */
public final class ProgressReporter implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger("rebalance.progress");
    private static final int WIDTH = 30;

    private final RunState run;
    private final PrintWriter out;
    private final boolean bar;
    private int widest;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "rebalance-progress");
        t.setDaemon(true);
        return t;
    });

    private ProgressReporter(RunState run, PrintWriter out, boolean bar) {
        this.run = run;
        this.out = out;
        this.bar = bar;
    }

    public static ProgressReporter start(RunState run, PrintWriter out, boolean barAllowed) {
        ProgressReporter r = new ProgressReporter(run, out, barAllowed && System.console() != null);
        long every = r.bar ? 1 : 10;
        r.timer.scheduleAtFixedRate(r::show, every, every, TimeUnit.SECONDS);
        return r;
    }

    private void show() {
        try {
            String line = line(run.progress());
            if (line == null) return;
            if (bar) {
                // pad to the longest line so far: \r returns to the start but does not erase a longer tail
                widest = Math.max(widest, line.length());
                out.print("\r" + line + " ".repeat(widest - line.length()));
                out.flush();
            } else {
                log.info(line);
            }
        } catch (RuntimeException e) {
            // Progress is visibility only; the next tick tries again.
        }
    }

    /** @return one line for the progress hash, or null before the keeper has published anything */
    static String line(CopyStatus p) {
        if (!p.known()) return null;
        long total = p.slotsTotal();
        long finished = p.slotsFinished();
        long rows = p.rows();
        long rate = p.rate();
        long eta = p.etaSeconds();
        int filled = total == 0 ? 0 : (int) (WIDTH * finished / total);
        return String.format(
                "[%s%s] %3d%% slots %d/%d  rows %,d  %,d rows/s%s",
                "#".repeat(filled),
                ".".repeat(WIDTH - filled),
                total == 0 ? 0 : 100 * finished / total,
                finished,
                total,
                rows,
                rate,
                eta >= 0 ? "  ETA " + human(eta) : "");
    }

    static String human(long seconds) {
        Duration d = Duration.ofSeconds(seconds);
        if (d.toHours() > 0) return d.toHours() + "h" + d.toMinutesPart() + "m";
        if (d.toMinutes() > 0) return d.toMinutes() + "m" + d.toSecondsPart() + "s";
        return seconds + "s";
    }

    public void finish(RunStatus end) {
        timer.shutdownNow();
        if (bar) out.println();
        CopyStatus p = run.progress();
        out.println("run " + end + ": " + p.rows() + " rows copied in all, " + p.slotsFinished() + "/"
                + (p.known() ? Long.toString(p.slotsTotal()) : "?") + " slots");
        out.flush();
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
