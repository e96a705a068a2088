package io.rota.client.cli;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The COMMAND that {@code lock} and {@code once} run: a child process that inherits rotactl's stdin, stdout and
 * stderr, with extra environment variables, and that rotactl can terminate (SIGTERM, then SIGKILL after a grace
 * that never reaches past the lock's or claim's safe-until).
 */
final class ChildCommand {

    /** How long a terminated command may take to exit after SIGTERM before it is killed. */
    static final Duration GRACE = Duration.ofSeconds(2);

    private final List<String> command;
    private final Process process;

    private ChildCommand(List<String> command, Process process) {
        this.command = command;
        this.process = process;
    }

    /**
     * Starts {@code command} with {@code env} added to rotactl's environment.
     *
     * @throws CommandFailure if it cannot be started (not found, not executable)
     */
    static ChildCommand start(List<String> command, Map<String, String> env) {
        ProcessBuilder builder = new ProcessBuilder(command).inheritIO();
        builder.environment().putAll(env);
        try {
            return new ChildCommand(command, builder.start());
        } catch (IOException e) {
            throw new CommandFailure("cannot run " + display(command) + ": " + e.getMessage()
                    + "; check the command's name and that it is executable");
        }
    }

    /** Completes with the exit code when the command exits. */
    CompletableFuture<Integer> exit() {
        return process.onExit().thenApply(Process::exitValue);
    }

    /**
     * Stops the command: SIGTERM to it and its descendants, SIGKILL to whatever still runs after {@link #GRACE}.
     *
     * @return its exit code
     */
    int terminate() {
        return terminate(System.nanoTime() + GRACE.toNanos());
    }

    /**
     * Stops the command by {@code killByNanos} (a lock's or claim's safe-until, on {@link System#nanoTime}):
     * SIGTERM to it and its descendants, SIGKILL to whatever still runs after {@link #GRACE} or at
     * {@code killByNanos}, whichever comes first (at once if it has passed).
     *
     * @return its exit code
     */
    int terminate(long killByNanos) {
        process.descendants().forEach(ProcessHandle::destroy);
        process.destroy();
        long graceEnd = System.nanoTime() + GRACE.toNanos();
        long killAt = killByNanos - graceEnd < 0 ? killByNanos : graceEnd;
        boolean exited;
        try {
            exited = process.waitFor(Math.max(0, killAt - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();   // kept for the caller; the kill below does not wait
            exited = false;
        }
        if (!exited) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }
        return process.onExit().join().exitValue();
    }

    /** The command as users wrote it, for messages. */
    String display() {
        return display(command);
    }

    private static String display(List<String> command) {
        return "'" + String.join(" ", command) + "'";
    }
}
