package io.rota.client.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The COMMAND that {@code lock} and {@code once} run: a child process that inherits rotactl's stdin, stdout and
 * stderr, with extra environment variables, started in a process group of its own so that rotactl alone decides
 * when it stops, and that rotactl can stop as a whole (signal, then SIGKILL after a grace that never reaches past
 * the lock's or claim's safe-until).
 *
 * <p>Why its own group: a terminal's Ctrl-C sends SIGINT to the whole foreground process group. If the COMMAND
 * shared rotactl's group it would die at the same instant, and its background children ({@code sh -c 'x & wait'})
 * could outlive the lock; in its own group, rotactl forwards the signal to the whole group, waits until no process
 * of the group remains, and only then releases the lock or records the once result. Java cannot call
 * {@code setpgid}, so the COMMAND is started through a launcher: util-linux {@code setsid} (Linux), else Perl's
 * {@code POSIX::setsid} (macOS, BSDs). Without either, it runs in rotactl's group and is stopped through
 * {@link ProcessHandle#descendants} as before.
 */
final class ChildCommand {

    /** How long a terminated command may take to exit after its signal before it is killed. */
    static final Duration GRACE = Duration.ofSeconds(2);
    /** How long to wait for SIGKILLed processes to disappear. */
    private static final Duration KILLED = Duration.ofSeconds(2);
    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private final List<String> command;
    private final Process process;
    /** The command's process group id, or 0 when it runs in rotactl's group. */
    private final long group;

    private ChildCommand(List<String> command, Process process, long group) {
        this.command = command;
        this.process = process;
        this.group = group;
    }

    /**
     * Starts {@code command} in a new process group (session) with {@code env} added to rotactl's environment.
     *
     * @throws CommandFailure if it cannot be started (not found, not executable)
     */
    static ChildCommand start(List<String> command, Map<String, String> env) {
        String path = System.getenv().getOrDefault("PATH", "");
        checkRunnable(command.get(0), path);
        List<String> launcher = launcher(path);
        List<String> argv = new ArrayList<>(launcher);
        argv.addAll(command);
        ProcessBuilder builder = new ProcessBuilder(argv).inheritIO();
        builder.environment().putAll(env);
        try {
            Process process = builder.start();
            // The launcher is not a group leader (it runs in rotactl's group), so setsid() needs no fork: the new
            // group's id is the launcher's pid, which exec()s the COMMAND.
            return new ChildCommand(command, process, launcher.isEmpty() ? 0 : process.pid());
        } catch (IOException e) {
            throw new CommandFailure("cannot run " + display(command) + ": " + e.getMessage()
                    + "; check the command's name and that it is executable");
        }
    }

    /** The prefix that starts a command in a new session and process group; empty if there is none. */
    static List<String> launcher(String path) {
        if (onPath("setsid", path).isPresent()) {
            return List.of("setsid");
        }
        if (onPath("perl", path).isPresent()) {
            return List.of("perl", "-MPOSIX", "-e", "POSIX::setsid(); exec { $ARGV[0] } @ARGV or die \"$ARGV[0]: $!\\n\"");
        }
        return List.of();
    }

    /** Fails as ProcessBuilder would, before the launcher hides it: a missing or non-executable COMMAND. */
    private static void checkRunnable(String program, String path) {
        boolean found = program.contains("/") ? Files.isExecutable(Path.of(program)) : onPath(program, path).isPresent();
        if (!found) {
            throw new CommandFailure("cannot run " + "'" + program + "': "
                    + (program.contains("/") ? "no executable file there" : "not found on PATH")
                    + "; check the command's name and that it is executable");
        }
    }

    private static Optional<Path> onPath(String program, String path) {
        return Stream.of(path.split(":")).filter(d -> !d.isEmpty()).map(d -> Path.of(d, program))
                .filter(Files::isExecutable).findFirst();
    }

    /** Completes with the exit code when the command exits. */
    CompletableFuture<Integer> exit() {
        return process.onExit().thenApply(Process::exitValue);
    }

    /** The command's process group id, or 0 when it shares rotactl's. */
    long group() {
        return group;
    }

    /**
     * Stops the command by {@code killByNanos} (a lock's or claim's safe-until, on {@link System#nanoTime}):
     * {@code signal} to its whole process group, SIGKILL to whatever of it still runs after {@link #GRACE} or at
     * {@code killByNanos}, whichever comes first (at once if it has passed). Returns only when no process of the
     * group is left (or after a further bounded wait for SIGKILLed ones).
     *
     * @param signal the signal's name without SIG: TERM, or the INT that rotactl received
     * @return its exit code
     */
    int terminate(String signal, long killByNanos) {
        long graceEnd = System.nanoTime() + GRACE.toNanos();
        long killAt = killByNanos - graceEnd < 0 ? killByNanos : graceEnd;
        signalAll(signal);
        if (!awaitGone(killAt)) {
            signalAll("KILL");
            awaitGone(System.nanoTime() + KILLED.toNanos());
        }
        return process.onExit().join().exitValue();
    }

    private void signalAll(String signal) {
        if (group == 0) {
            boolean kill = signal.equals("KILL");
            process.descendants().forEach(kill ? ProcessHandle::destroyForcibly : ProcessHandle::destroy);
            if (kill) {
                process.destroyForcibly();
            } else {
                process.destroy();
            }
            return;
        }
        ProcessGroups.signal(group, signal);
    }

    /** Waits until the command (and, in its own group, every process of the group) has exited. */
    private boolean awaitGone(long deadlineNanos) {
        while (true) {
            boolean gone = !process.isAlive() && (group == 0 || !ProcessGroups.alive(group));
            if (gone) {
                return true;
            }
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            try {
                process.waitFor(Math.min(left, POLL_NANOS), TimeUnit.NANOSECONDS);
                if (!process.isAlive()) {
                    TimeUnit.NANOSECONDS.sleep(Math.min(left, POLL_NANOS));   // the group's other members: poll
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();   // kept for the caller; stop waiting, the KILL follows
                return false;
            }
        }
    }

    /** The command as users wrote it, for messages. */
    String display() {
        return display(command);
    }

    private static String display(List<String> command) {
        return "'" + String.join(" ", command) + "'";
    }
}
