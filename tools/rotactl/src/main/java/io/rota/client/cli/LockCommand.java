package io.rota.client.cli;

import io.rota.client.KeyValue;
import io.rota.client.RotaClient;
import io.rota.client.recipes.Lock;
import io.rota.client.recipes.LockHandle;
import io.rota.client.recipes.LockLostException;
import io.rota.client.recipes.LockOptions;
import io.rota.client.recipes.LockTimeoutException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/** {@code rotactl lock NAME [--ttl SECONDS] [--timeout DURATION] [-- COMMAND ARGS...]}. */
@Command(name = "lock", sortOptions = false,
        description = {"Acquires the distributed lock NAME (fair: first come, first served) and holds it.",
                "With a COMMAND (after --): runs it while holding the lock, with ROTA_FENCING_TOKEN and ROTA_LOCK_KEY "
                        + "in its environment, releases the lock when it exits and exits with its exit code. If the lock "
                        + "is lost meanwhile (lease expired or revoked, or no keep-alive confirmed until safe-until), the "
                        + "command is terminated (SIGTERM, then SIGKILL after 2 s but never later than safe-until) and "
                        + "rotactl exits with 1.",
                "Ctrl-C or SIGTERM sends the same signal to COMMAND's whole process group (it runs in a group of "
                        + "its own), waits until none of it is left (SIGKILL after 2 s) and only then releases the lock.",
                "Without a COMMAND: prints the lock's key and fencing token and holds the lock until Ctrl-C (exit 130, after the release) "
                        + "or until it is lost (exit 1).",
                "While another holder has the lock, a line on stderr says who."})
final class LockCommand extends ClientCommand {

    /** "No timeout": long enough, and far from overflowing a nanoTime deadline. */
    private static final Duration FOREVER = Duration.ofNanos(Long.MAX_VALUE / 4);

    @Parameters(index = "0", paramLabel = "NAME", description = "The lock's name (keys under rota/lock/NAME/).")
    String name;

    @Parameters(index = "1..*", paramLabel = "COMMAND", description = "The command to run while holding the lock, "
            + "after '--', e.g. -- ./backup.sh --full")
    List<String> command;

    @Option(names = "--ttl", paramLabel = "SECONDS", defaultValue = "10",
            description = "The TTL of the holder's lease: how long a dead holder blocks the lock at most "
                    + "(default: ${DEFAULT-VALUE}).")
    long ttl;

    @Option(names = "--timeout", paramLabel = "DURATION", converter = Conversions.DurationConverter.class,
            description = "Give up (exit 1) if the lock is not acquired within DURATION, e.g. 30s (default: wait).")
    Duration timeout;

    @Override
    int run(RotaClient client, Printer printer) throws InterruptedException {
        if (name.isEmpty()) {
            throw usage("the lock name is empty");
        }
        if (ttl < 1) {
            throw usage("--ttl must be at least 1 second (got " + ttl + ")");
        }
        Lock lock = Lock.of(client, name, LockOptions.defaults().withTtl(Duration.ofSeconds(ttl)));
        Optional<KeyValue> holder = lock.holder();
        if (holder.isPresent()) {
            root().note(spec, Rotactl.note("waiting").field("name", name).field("holder", holder.get().keyString())
                    .field("fencing_token", holder.get().createRevision()), "waiting for lock " + name + " held by "
                    + holder.get().keyString() + " (fencing token " + holder.get().createRevision() + ")");
        }
        LockHandle held;
        try {
            held = lock.acquire(timeout == null ? FOREVER : timeout);
        } catch (InterruptedException e) {
            return 0;   // stopped while waiting (Ctrl-C): the waiter's key is removed, nothing is held
        } catch (LockTimeoutException e) {
            throw new CommandFailure("LOCK_TIMEOUT", "lock " + name + " not acquired within " + Conversions.format(timeout)
                    + ": another holder has it (see 'rotactl get rota/lock/" + name + "/ --prefix'); retry later or "
                    + "wait longer with --timeout");
        } catch (LockLostException e) {
            throw new CommandFailure("lost the place in the queue of lock " + name + " while waiting (" + e.getMessage()
                    + "); is the cluster healthy? ('rotactl endpoint status'), then run the command again");
        }
        CompletableFuture<String> lost = new CompletableFuture<>();
        held.onLost((h, reason) -> lost.complete(reason));
        try {
            return command == null || command.isEmpty() ? hold(held, lost, printer) : runCommand(held, lost);
        } finally {
            root().stop().beginCleanup();   // the release is not cut short by the signal that stopped us
            held.release();
        }
    }

    /** Prints the key and token, then waits for Ctrl-C (0) or the loss of the lock (1). */
    private int hold(LockHandle held, CompletableFuture<String> lost, Printer printer) {
        printer.lockHeld(name, held.key(), held.fencingToken(), held.leaseId());
        String reason;
        try {
            reason = lost.get();
        } catch (InterruptedException e) {
            return 0;   // stopped: Ctrl-C, or the thread of an embedded rotactl
        } catch (ExecutionException e) {
            throw new IllegalStateException("the lost future never fails", e);
        }
        throw lostFailure(reason, null);
    }

    /** Runs the command under the lock; terminates it if the lock is lost, killing it by safe-until at the latest. */
    private int runCommand(LockHandle held, CompletableFuture<String> lost) {
        ChildCommand child = ChildCommand.start(command, Map.of("ROTA_FENCING_TOKEN", Long.toString(held.fencingToken()),
                "ROTA_LOCK_KEY", held.key()));
        CompletableFuture<Integer> exit = child.exit();
        try {
            CompletableFuture.anyOf(exit, lost).get();
        } catch (InterruptedException e) {
            // Stopped (Ctrl-C, SIGTERM): the same signal to the command's whole process group; the lock is released
            // only once no process of the group is left, so no background child works on without the lock.
            root().stop().beginCleanup();
            return child.terminate(root().stop().forwardedSignal(), held.safeUntilNanos());
        } catch (ExecutionException e) {
            throw new IllegalStateException("neither future fails", e);
        }
        if (exit.isDone()) {
            // The command ended, but was the lock held all along? After a pause (SIGSTOP, a long GC) the exit and
            // the loss are seen together; safe-until passed also means another may have held it (issue 31).
            if (!lost.isDone() && System.nanoTime() - held.safeUntilNanos() < 0) {
                return exit.join();
            }
            throw new CommandFailure("LOCK_LOST", "lost the lock " + name + " while " + String.join(" ", command) + " ran ("
                    + (lost.isDone() ? lost.join() : "its safe-until passed before rotactl saw the command end")
                    + "); it exited with " + exit.join() + ", but another holder may have run meanwhile: check the"
                    + " work, and fence it with ROTA_FENCING_TOKEN");
        }
        root().stop().beginCleanup();
        child.terminate("TERM", held.safeUntilNanos());
        throw lostFailure(lost.join(), child);
    }

    private CommandFailure lostFailure(String reason, ChildCommand child) {
        return new CommandFailure("LOCK_LOST", "lost the lock " + name + " (" + reason + ")"
                + (child == null ? "" : ": terminated " + child.display())
                + "; fencing tokens reject the old holder's late writes; acquire it again to continue");
    }
}
