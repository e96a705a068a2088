package io.rota.chaos.nemesis;

import io.rota.chaos.history.HistoryWriter;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Runs a {@link Nemesis} on its own thread: a quiet spell, a fault, a spell with the fault in place, heal,
 * and again, each spell a seeded random length in [{@code min}, {@code max}). Every fault and heal goes into
 * the history as a nemesis info event and, with a wall-clock time, into the nemesis log.
 */
public final class NemesisSchedule implements AutoCloseable {

    private final Nemesis nemesis;
    private final Random random;
    private final Duration min;
    private final Duration max;
    private final HistoryWriter history;
    private final BufferedWriter log;
    private final CountDownLatch stop = new CountDownLatch(1);
    private final Thread thread;
    private volatile String current = "none";
    private volatile int faultCount;
    private volatile Throwable failure;

    /**
     * Prepares a schedule; {@link #start()} runs it.
     *
     * @param nemesis the nemesis
     * @param random  the run's seeded randomness (used by this thread only)
     * @param min     shortest spell
     * @param max     longest spell (exclusive)
     * @param history the run's history
     * @param logFile the nemesis log (created)
     */
    public NemesisSchedule(Nemesis nemesis, Random random, Duration min, Duration max, HistoryWriter history,
                           Path logFile) {
        if (max.compareTo(min) <= 0) {
            throw new IllegalArgumentException("the longest spell must exceed the shortest: " + min + " .. " + max);
        }
        this.nemesis = nemesis;
        this.random = random;
        this.min = min;
        this.max = max;
        this.history = history;
        try {
            this.log = Files.newBufferedWriter(logFile, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the nemesis log " + logFile, e);
        }
        this.thread = new Thread(this::loop, "nemesis-" + nemesis.name());
    }

    /** Starts the schedule. */
    public void start() {
        thread.start();
    }

    /**
     * The fault in place now, for the progress line.
     *
     * @return its description, or "none"
     */
    public String current() {
        return current;
    }

    /**
     * How many faults were injected so far.
     *
     * @return the count
     */
    public int faultCount() {
        return faultCount;
    }

    /**
     * The error that stopped the nemesis early (e.g. a member that would not restart), if any.
     *
     * @return the failure, or null
     */
    public Throwable failure() {
        return failure;
    }

    private void loop() {
        try {
            while (!waitSpell()) {
                String what = nemesis.fault(random);
                faultCount++;
                current = what;
                record(nemesis.name(), what);
                boolean stopping = waitSpell();
                record("heal", nemesis.heal());
                current = "none";
                if (stopping) {
                    return;
                }
            }
        } catch (RuntimeException | AssertionError e) {
            failure = e;
            record("error", "the nemesis failed: " + e);
            try {
                record("heal", nemesis.heal());
            } catch (RuntimeException | AssertionError again) {
                record("error", "heal after the failure failed too: " + again);
            }
            current = "none (nemesis failed: " + e.getMessage() + ")";
        }
    }

    /** Waits one random spell; true if asked to stop meanwhile. */
    private boolean waitSpell() {
        long spanMs = max.toMillis() - min.toMillis();
        long ms = min.toMillis() + (spanMs <= 0 ? 0 : (long) (random.nextDouble() * spanMs));
        try {
            return stop.await(ms, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return true;
        }
    }

    private void record(String f, String description) {
        long t = history.recordNemesis(f, description);
        try {
            log.write(String.format(Locale.ROOT, "%s  %9.3f s  %-9s %s%n", java.time.Instant.now(), t / 1e9, f,
                    description));
            log.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the nemesis log", e);
        }
    }

    /** Stops the schedule, healing the fault in place if any, and waits for the thread. */
    @Override
    public void close() {
        stop.countDown();
        try {
            thread.join(TimeUnit.MINUTES.toMillis(3));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            log.close();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot close the nemesis log", e);
        }
    }
}
