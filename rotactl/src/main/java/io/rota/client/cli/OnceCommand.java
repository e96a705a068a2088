package io.rota.client.cli;

import io.rota.client.RotaClient;
import io.rota.client.recipes.Once;
import io.rota.client.recipes.OnceRecord;
import io.rota.client.recipes.OnceState;
import io.rota.client.recipes.OnceStatus;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/** {@code rotactl once KEY -- COMMAND ARGS...} and {@code rotactl once KEY --status}. */
@Command(name = "once", sortOptions = false,
        description = {"Runs COMMAND at most once cluster-wide for the once-record KEY (an idempotency record "
                + "under rota/once/KEY).",
                "If nobody did, claims KEY, runs COMMAND (with ROTA_ONCE_KEY in its environment) and records DONE "
                        + "('exit 0') or FAILED ('exit N'); rotactl exits with the command's exit code.",
                "If the claim is lost while COMMAND runs (its lease expired or was revoked, no keep-alive was "
                        + "confirmed until safe-until, or the record was deleted), COMMAND is terminated as 'lock' does "
                        + "(SIGTERM, SIGKILL after 2 s but never later than safe-until), nothing is recorded and "
                        + "rotactl exits with 1.",
                "Ctrl-C or SIGTERM sends the same signal to COMMAND's whole process group, waits until none of it "
                        + "is left (SIGKILL after 2 s) and records FAILED ('interrupted, exit 130'; 143 for SIGTERM).",
                "If KEY is DONE, prints 'KEY already done: RESULT' and exits 0 without running COMMAND. If another "
                        + "process runs it now, or it FAILED (failures are not retried), says so and exits 1.",
                "With --status: prints the record (state, owner, result) instead."})
final class OnceCommand extends ClientCommand {

    @Parameters(index = "0", paramLabel = "KEY", description = "The once-record's key, e.g. reminders/2026-11-29.")
    String key;

    @Parameters(index = "1..*", paramLabel = "COMMAND", description = "The command to run once, after '--'.")
    List<String> command;

    @Option(names = "--status", description = "Print the record of KEY; run nothing.")
    boolean status;

    @Override
    int run(RotaClient client, Printer printer) {
        boolean hasCommand = command != null && !command.isEmpty();
        if (key.isEmpty()) {
            throw usage("the once-record key is empty");
        }
        if (status == hasCommand) {
            throw usage(status ? "--status prints the record and runs nothing: drop COMMAND"
                    : "COMMAND is missing: once KEY -- COMMAND ARGS... (or once KEY --status)");
        }
        Once once = Once.of(client);
        if (status) {
            printer.onceStatus(key, once.status(key).orElse(null));
            return 0;
        }
        OnceRecord record = once.record(key);
        try {
            if (!record.claim()) {
                return notClaimed(record.status(), printer);
            }
            CompletableFuture<String> lost = new CompletableFuture<>();
            record.onLost(lost::complete);
            ChildCommand child = ChildCommand.start(command, Map.of("ROTA_ONCE_KEY", key));
            CompletableFuture<Integer> exit = child.exit();
            int code;
            String result;
            try {
                CompletableFuture.anyOf(exit, lost).get();
                if (!exit.isDone()) {
                    root().stop().beginCleanup();
                    code = child.terminate("TERM", record.safeUntilNanos());
                    throw new CommandFailure("lost the claim on " + key + " (" + lost.join() + "): terminated "
                            + child.display() + " (exit " + code + "); it may have done part of its work, and another "
                            + "process may claim " + key + " and run it; nothing was recorded, as the record is not "
                            + "this process's any more");
                }
                root().stop().beginCleanup();
                code = exit.join();
                result = "exit " + code;
            } catch (InterruptedException e) {
                // Stopped (Ctrl-C, SIGTERM): the same signal goes to the command's whole process group, and the
                // record says FAILED only once no process of it is left: it may have done part of its work, so
                // this is a failure, not a give-up that would let the next 'once' run it again.
                root().stop().beginCleanup();
                code = child.terminate(root().stop().forwardedSignal(), record.safeUntilNanos());
                result = "interrupted, exit " + code;
            } catch (ExecutionException e) {
                throw new IllegalStateException("neither future fails", e);
            }
            boolean recorded = code == 0 ? record.complete(result) : record.fail(result);
            if (!recorded) {
                throw new CommandFailure(child.display() + " ended with " + result + ", but the claim on " + key
                        + " was lost while it ran (" + record.lostReason() + "): another process may have run it too");
            }
            return code;
        } finally {
            root().stop().beginCleanup();   // giving up an unfinished claim is not cut short by a signal
            record.close();
        }
    }

    /** Says why the command does not run: done (0), in progress elsewhere or failed (1). */
    private int notClaimed(Optional<OnceStatus> record, Printer printer) {
        if (record.isEmpty()) {
            throw new CommandFailure("could not claim " + key + ": its claimer gave it up meanwhile; run the command"
                    + " again");
        }
        OnceStatus s = record.get();
        if (s.state() == OnceState.DONE) {
            printer.onceAlreadyDone(s);
            return 0;
        }
        if (s.state() == OnceState.CLAIMED) {
            throw new CommandFailure(key + " is in progress elsewhere (claimed by " + s.owner() + "); if that process "
                    + "dies, its claim expires and the command may be run again");
        }
        throw new CommandFailure(key + " failed earlier (" + s.result() + ", by " + s.owner() + ") and failures are "
                + "not retried; check what it left behind, then 'rotactl del rota/once/" + key + "' to allow a retry");
    }
}
