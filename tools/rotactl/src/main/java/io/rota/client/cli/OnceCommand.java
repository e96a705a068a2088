package io.rota.client.cli;

import io.rota.client.RotaClient;
import io.rota.client.recipes.Once;
import io.rota.client.recipes.OnceOptions;
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

/**
 * {@code rotactl once KEY [--retry-failed] -- COMMAND ARGS...}, {@code rotactl once KEY --status} and {@code
 * rotactl once KEY --reset}.
 */
@Command(name = "once", sortOptions = false,
        description = {"Runs COMMAND at most once cluster-wide for the once-record KEY (an idempotency record "
                + "under rota/once/KEY).",
                "If nobody did, claims KEY, runs COMMAND (with ROTA_ONCE_KEY and ROTA_FENCING_TOKEN, the claim's "
                        + "token, in its environment) and records DONE ('exit 0') or FAILED ('exit N'); rotactl exits "
                        + "with the command's exit code.",
                "If the claim is lost while COMMAND runs (its lease expired or was revoked, no keep-alive was "
                        + "confirmed until safe-until, or the record was deleted), COMMAND is terminated as 'lock' does "
                        + "(SIGTERM, SIGKILL after 2 s but never later than safe-until), nothing is recorded and "
                        + "rotactl exits with 1.",
                "Ctrl-C or SIGTERM sends the same signal to COMMAND's whole process group, waits until none of it "
                        + "is left (SIGKILL after 2 s) and releases the claim: nothing is recorded, and the next "
                        + "'once KEY' runs COMMAND again.",
                "If KEY is DONE, prints 'KEY already done: RESULT' and exits 0 without running COMMAND. If another "
                        + "process runs it now, or it FAILED (and --retry-failed is not given), says so and exits 1.",
                "With --status: prints the record (state, owner, result) instead. With --reset: deletes a DONE or "
                        + "FAILED record after printing it, so the next 'once KEY' runs COMMAND again (exit 1 while a "
                        + "claim is in progress)."})
final class OnceCommand extends ClientCommand {

    @Parameters(index = "0", paramLabel = "KEY", description = "The once-record's key, e.g. reminders/2026-11-29.")
    String key;

    @Parameters(index = "1..*", paramLabel = "COMMAND", description = "The command to run once, after '--'.")
    List<String> command;

    @Option(names = "--status", description = "Print the record of KEY; run nothing.")
    boolean status;

    @Option(names = "--retry-failed", description = "Run COMMAND again if KEY FAILED earlier (the FAILED record is "
            + "replaced by the new claim, compared on its revision so one retrier wins).")
    boolean retryFailed;

    @Option(names = "--reset", description = "Delete the DONE or FAILED record of KEY, after printing it, so the next "
            + "'once KEY' runs again; run nothing. Refused while KEY is claimed.")
    boolean reset;

    @Override
    int run(RotaClient client, Printer printer) {
        boolean hasCommand = command != null && !command.isEmpty();
        if (key.isEmpty()) {
            throw usage("the once-record key is empty");
        }
        if (status && reset) {
            throw usage("--status and --reset do not go together: choose one");
        }
        if ((status || reset) == hasCommand) {
            String option = status ? "--status prints" : "--reset deletes";
            throw usage(hasCommand ? option + " the record and runs nothing: drop COMMAND"
                    : "COMMAND is missing: once KEY -- COMMAND ARGS... (or once KEY --status, once KEY --reset)");
        }
        if (retryFailed && !hasCommand) {
            throw usage("--retry-failed needs a COMMAND to run: once KEY --retry-failed -- COMMAND ARGS...");
        }
        Once once = Once.of(client, OnceOptions.defaults().withRetryFailed(retryFailed));
        if (status) {
            printer.onceStatus(key, once.status(key).orElse(null));
            return 0;
        }
        if (reset) {
            return reset(once, printer);
        }
        OnceRecord record = once.record(key);
        try {
            if (!record.claim()) {
                return notClaimed(record.status(), printer);
            }
            CompletableFuture<String> lost = new CompletableFuture<>();
            record.onLost(lost::complete);
            ChildCommand child = ChildCommand.start(command, Map.of("ROTA_ONCE_KEY", key,
                    "ROTA_FENCING_TOKEN", Long.toString(record.fencingToken())));
            CompletableFuture<Integer> exit = child.exit();
            int code;
            try {
                CompletableFuture.anyOf(exit, lost).get();
            } catch (InterruptedException e) {
                // Stopped (Ctrl-C, SIGTERM): the same signal goes to the command's whole process group, and once no
                // process of it is left the claim is released (finally: close), as the SDK's close() does: an
                // interrupt the caller sent is not a failure of the command, and the next 'once' runs it again.
                root().stop().beginCleanup();
                return child.terminate(root().stop().forwardedSignal(), record.safeUntilNanos());
            } catch (ExecutionException e) {
                throw new IllegalStateException("neither future fails", e);
            }
            root().stop().beginCleanup();
            if (!exit.isDone()) {
                code = child.terminate("TERM", record.safeUntilNanos());
                throw new CommandFailure("lost the claim on " + key + " (" + lost.join() + "): terminated "
                        + child.display() + " (exit " + code + "); it may have done part of its work, and another "
                        + "process may claim " + key + " and run it; nothing was recorded, as the record is not "
                        + "this process's any more");
            }
            code = exit.join();
            String result = "exit " + code;
            boolean recorded = code == 0 ? record.complete(result) : record.fail(result);
            if (!recorded) {
                throw new CommandFailure(child.display() + " ended with " + result + ", but the claim on " + key
                        + " was lost while it ran (" + record.lostReason() + "): another process may have run it too;"
                        + " fence its work with ROTA_FENCING_TOKEN");
            }
            return code;
        } finally {
            root().stop().beginCleanup();   // giving up an unfinished claim is not cut short by a signal
            record.close();
        }
    }

    /** Deletes a finished record after printing it: 0, also when there was none; 1 while it is claimed. */
    private int reset(Once once, Printer printer) {
        Optional<OnceStatus> deleted;
        try {
            deleted = once.reset(key);
        } catch (IllegalStateException e) {
            throw new CommandFailure(e.getMessage());
        }
        printer.onceStatus(key, deleted.orElse(null));
        if (deleted.isPresent()) {
            root().note(spec, Rotactl.note("reset").field("key", key), "reset " + key + ": the record above is"
                    + " deleted; the next 'once " + key + "' runs its command again");
        }
        return 0;
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
            throw new CommandFailure("ONCE_IN_PROGRESS", key + " is in progress elsewhere (claimed by " + s.owner() + "); if that process "
                    + "dies, its claim expires and the command may be run again");
        }
        throw new CommandFailure("ONCE_FAILED", key + " failed earlier (" + s.result() + ", by " + s.owner() + ") and failures are "
                + "not retried by default; check what it left behind, then run it again with 'rotactl once " + key
                + " --retry-failed -- COMMAND' (or 'rotactl once " + key + " --reset')");
    }
}
