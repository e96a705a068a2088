package io.rota.client.cli;

import io.rota.client.RotaClient;
import io.rota.client.Watch;
import io.rota.client.recipes.Election;
import io.rota.client.recipes.ElectionListener;
import io.rota.client.recipes.Leader;
import io.rota.client.recipes.LockLostException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/** {@code rotactl elect NAME PROPOSAL} and {@code rotactl elect NAME --listen}. */
@Command(name = "elect", sortOptions = false,
        description = {"Campaigns in the election NAME with PROPOSAL as its value and, once elected, prints the "
                + "leader's key, value and epoch (its fencing token), then leads until Ctrl-C (resigns, exit 0) or "
                + "until leadership is lost (exit 1).",
                "With --listen: prints the leader (key, value, epoch) now and after every change, until Ctrl-C."})
final class ElectCommand extends ClientCommand {

    @Parameters(index = "0", paramLabel = "NAME", description = "The election's name (keys under rota/election/NAME/).")
    String name;

    @Parameters(index = "1", arity = "0..1", paramLabel = "PROPOSAL",
            description = "The value to announce as leader, e.g. host:port (required without --listen).")
    String proposal;

    @Option(names = {"-l", "--listen"}, description = "Observe the election instead of campaigning.")
    boolean listen;

    @Override
    int run(RotaClient client, Printer printer) throws InterruptedException {
        if (name.isEmpty()) {
            throw usage("the election name is empty");
        }
        if (listen && proposal != null) {
            throw usage("--listen observes without campaigning: drop PROPOSAL, or drop --listen to campaign");
        }
        if (!listen && proposal == null) {
            throw usage("PROPOSAL is required to campaign (or use --listen to observe)");
        }
        Election election = Election.of(client, name);
        return listen ? listen(election, printer) : campaign(election, printer);
    }

    /** Prints every leader change until interrupted. */
    private int listen(Election election, Printer printer) {
        CompletableFuture<Void> never = new CompletableFuture<>();
        Watch watch = election.observe(leader -> printer.leader(name, leader.orElse(null)));
        try {
            never.get();
        } catch (InterruptedException e) {
            return 0;   // stopped: Ctrl-C, or the thread of an embedded rotactl
        } catch (ExecutionException e) {
            throw new IllegalStateException("the future never fails", e);
        } finally {
            watch.close();
        }
        return 0;
    }

    /** Campaigns, prints the leadership, and leads until interrupted (0) or deposed (1). */
    private int campaign(Election election, Printer printer) {
        CompletableFuture<String> lost = new CompletableFuture<>();
        election.addListener(new ElectionListener() {
            @Override
            public void gained(Leader leader) {
                // printed by the campaigning thread, which returns with the same leader
            }

            @Override
            public void lost(String reason) {
                lost.complete(reason);
            }
        });
        Leader me;
        try {
            me = election.campaign(proposal);
        } catch (InterruptedException e) {
            return 0;   // stopped while campaigning: the campaign is withdrawn
        } catch (LockLostException e) {
            throw new CommandFailure("lost the place in election " + name + " while campaigning (" + e.getMessage()
                    + "); is the cluster healthy? ('rotactl endpoint status'), then run the command again");
        }
        String reason;
        try {
            printer.leader(name, me);
            reason = lost.get();
        } catch (InterruptedException e) {
            return 0;   // stopped: resigns below
        } catch (ExecutionException e) {
            throw new IllegalStateException("the lost future never fails", e);
        } finally {
            election.resign();
        }
        throw new CommandFailure("LEADERSHIP_LOST", "lost the leadership of " + name + " (" + reason + "); the next campaigner leads "
                + "with a higher epoch; campaign again to rejoin");
    }
}
