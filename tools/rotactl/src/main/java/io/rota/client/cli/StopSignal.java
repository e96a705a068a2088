package io.rota.client.cli;

import java.io.PrintStream;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * How Ctrl-C (SIGINT) and SIGTERM stop a rotactl command: the signal interrupts the command's thread ONCE, while
 * the command still runs; once the command has begun to clean up ({@link #beginCleanup}: release a lock, record
 * a once result, close the client) no further interrupt reaches it, so those calls to the cluster are not cut off
 * and reported as failures. The signal's name is kept so a COMMAND run by {@code lock} or {@code once} is sent
 * the same signal.
 *
 * <p>Why not a shutdown hook: a hook runs while the JVM is already exiting, with the exit code fixed by the
 * signal, and it cannot tell SIGINT from SIGTERM. rotactl instead handles the two signals itself (as etcdctl does
 * with Go's {@code signal.Notify}) through {@code sun.misc.Signal}, the JDK's supported-but-unofficial signal API
 * (module {@code jdk.unsupported}); where it is missing, {@link #install} falls back to a shutdown hook.
 *
 * <p>Embedded and in tests, nobody installs handlers: interrupting the command's thread is the stop, and the
 * signal to forward is SIGTERM.
 */
final class StopSignal {

    /** How long a stopped rotactl may take to clean up before it exits anyway (the lease then ends the hold). */
    static final Duration CLEANUP = Duration.ofSeconds(10);

    private enum State { RUNNING, STOPPING, CLEANUP }

    private final Thread command;
    /** Counted down by {@link #finished()} when the command has returned (for the shutdown-hook fallback). */
    private final CountDownLatch finished = new CountDownLatch(1);
    private State state = State.RUNNING;
    private String signal;
    /** Whether the command writes {@code -w json}: then what this class says on stderr is a JSON error too. */
    private volatile boolean json;

    /** @param command the thread that runs the command */
    StopSignal(Thread command) {
        this.command = command;
    }

    /**
     * Handles SIGINT and SIGTERM for this JVM: the first one stops the command (see {@link #stop}), a second one,
     * or a cleanup longer than {@link #CLEANUP}, exits at once with 128 + the signal's number.
     *
     * @param err where to say that cleanup was cut short
     */
    void install(PrintStream err) {
        try {
            for (String name : new String[] {"INT", "TERM"}) {
                sun.misc.Signal.handle(new sun.misc.Signal(name), s -> onSignal(s.getName(), s.getNumber(), err));
            }
        } catch (IllegalArgumentException | LinkageError e) {
            // No handler (the JVM reserves the signal, or jdk.unsupported is absent): a shutdown hook interrupts,
            // then holds the JVM until the command has cleaned up (at most CLEANUP).
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                stop("TERM");
                try {
                    finished.await(CLEANUP.toMillis(), TimeUnit.MILLISECONDS);
                } catch (InterruptedException stopped) {
                    Thread.currentThread().interrupt();
                }
            }, "rotactl-stop"));
        }
    }

    /** The command writes {@code -w json} ({@code true}): say a cut-short cleanup as a JSON error (design HS66). */
    void json(boolean on) {
        json = on;
    }

    private void say(PrintStream err, String message) {
        err.println(json ? Rotactl.error("STOPPED", message) : "Error: " + message);
    }

    private void onSignal(String name, int number, PrintStream err) {
        if (!stop(name)) {
            say(err, "stopped again (SIG" + name + ") before cleanup finished; a lock or once-claim still held"
                    + " ends with its lease");
            Runtime.getRuntime().halt(128 + number);
        }
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(CLEANUP.toMillis());
            } catch (InterruptedException e) {
                return;
            }
            say(err, "cleanup after SIG" + name + " took longer than " + Conversions.format(CLEANUP)
                    + "; exiting anyway: a lock or once-claim still held ends with its lease");
            Runtime.getRuntime().halt(128 + number);
        }, "rotactl-cleanup-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
    }

    /**
     * Stops the command: interrupts its thread if it has not begun to clean up.
     *
     * @param name the signal's name without SIG ({@code INT}, {@code TERM})
     * @return false if the command had already been stopped (a second signal)
     */
    synchronized boolean stop(String name) {
        if (signal != null) {
            return false;
        }
        signal = name;
        if (state == State.RUNNING) {
            state = State.STOPPING;
            command.interrupt();
        }
        return true;
    }

    /**
     * The command begins to clean up: from now on a signal no longer interrupts it, and an interrupt already
     * delivered (the one that stopped it) is cleared, so the cleanup's calls to the cluster run to their end.
     * Called on the command's thread.
     */
    synchronized void beginCleanup() {
        state = State.CLEANUP;
        Thread.interrupted();
    }

    /** The command has returned; a shutdown hook waiting for its cleanup may let the JVM end. */
    void finished() {
        finished.countDown();
    }

    /**
     * rotactl's exit code after {@code code}: a command that a signal stopped and that ended cleanly (a watch, a
     * held lock, an elected leader) exits with 128 + the signal's number, as shells expect of an interrupted
     * process; a non-zero code (a COMMAND's own, a failure) is kept.
     */
    synchronized int exitCode(int code) {
        return signal != null && code == 0 ? 128 + CommandFailure.signalNumber(signal) : code;
    }

    /** The signal to forward to a COMMAND when the command is stopped: the one received, else TERM. */
    synchronized String forwardedSignal() {
        return signal == null ? "TERM" : signal;
    }
}
