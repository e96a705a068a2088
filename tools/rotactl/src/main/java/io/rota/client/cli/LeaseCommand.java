package io.rota.client.cli;

import io.rota.client.KeepAlive;
import io.rota.client.Lease;
import io.rota.client.LeaseListener;
import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import static io.rota.client.cli.Conversions.leaseHex;

/** {@code rotactl lease grant|revoke|keep-alive|timetolive|list}. */
@Command(name = "lease", description = {"Lease commands. A lease has a TTL; keys put with --lease ID are deleted "
        + "when it is revoked or expires, which it does unless kept alive.",
        "Lease IDs are hexadecimal, as 'lease grant' prints them."},
        subcommands = {LeaseCommand.Grant.class, LeaseCommand.Revoke.class, LeaseCommand.KeepAliveCommand.class,
                LeaseCommand.TimeToLive.class, LeaseCommand.ListCommand.class})
final class LeaseCommand extends CommandGroup {

    LeaseCommand() {
        super("name a lease command: grant, revoke, keep-alive, timetolive or list");
    }

    /** {@code lease grant TTL}. */
    @Command(name = "grant", description = "Grants a lease of TTL seconds (raised to the cluster's minimum, "
            + "1.5 x its election timeout). Prints its ID.")
    static final class Grant extends ClientCommand {
        /** A thousand years: far above any cluster's limit, far below overflowing a Duration in milliseconds. */
        private static final long MAX_TTL_SECONDS = 1000L * 365 * 24 * 3600;

        @Parameters(index = "0", paramLabel = "TTL", description = "The time to live in seconds.")
        long ttl;

        @Override
        int run(RotaClient client, Printer printer) {
            if (ttl <= 0) {
                throw usage("TTL must be a positive number of seconds (got " + ttl + ")");
            }
            if (ttl > MAX_TTL_SECONDS) {
                // The cluster's own limit (a year by default) refuses most long TTLs; this one keeps the
                // conversion to milliseconds from overflowing.
                throw usage("TTL must be at most " + MAX_TTL_SECONDS + " seconds (got " + ttl + ")");
            }
            Lease lease = client.leases().grant(Duration.ofSeconds(ttl));
            printer.leaseGranted(lease);
            return 0;
        }
    }

    /** {@code lease revoke ID}. */
    @Command(name = "revoke", description = "Revokes a lease, deleting its keys in one revision.")
    static final class Revoke extends ClientCommand {
        @Parameters(index = "0", paramLabel = "ID", converter = Conversions.LeaseIdConverter.class,
                description = "The lease ID (hex).")
        long id;

        @Override
        int run(RotaClient client, Printer printer) {
            try {
                client.leases().revoke(id);
            } catch (RotaException e) {
                throw leaseFailure(e, id);
            }
            printer.leaseRevoked(id);
            return 0;
        }
    }

    /** {@code lease keep-alive ID [--once]}: renews until Ctrl-C, printing each renewal. */
    @Command(name = "keep-alive", aliases = "keepalive", description = {"Keeps a lease alive until Ctrl-C "
            + "(a renewal every TTL/3), printing each renewal.",
            "Exits with 1 if the lease is lost: revoked, expired, or not renewed for a whole TTL."})
    static final class KeepAliveCommand extends ClientCommand {
        @Parameters(index = "0", paramLabel = "ID", converter = Conversions.LeaseIdConverter.class,
                description = "The lease ID (hex).")
        long id;

        @Option(names = "--once", description = "Renew once and exit.")
        boolean once;

        @Override
        int run(RotaClient client, Printer printer) throws InterruptedException {
            try {
                client.leases().timeToLive(id, false);   // fails fast, within the command timeout, if unknown
            } catch (RotaException e) {
                throw leaseFailure(e, id);
            }
            CompletableFuture<Void> ended = new CompletableFuture<>();
            KeepAlive keepAlive = client.leases().keepAlive(id, new LeaseListener() {
                @Override
                public void onRenewed(long leaseId, Duration ttl) {
                    printer.leaseRenewed(leaseId, ttl);
                    if (once) {
                        ended.complete(null);
                    }
                }

                @Override
                public void onLost(long leaseId, RotaException reason) {
                    ended.completeExceptionally(reason);
                }
            });
            try {
                ended.get();
            } catch (InterruptedException e) {
                return 0;   // stopped: Ctrl-C, or the thread of an embedded rotactl
            } catch (ExecutionException e) {
                RotaException reason = (RotaException) e.getCause();
                throw new CommandFailure(reason.code().name(), reason.code() == RotaException.Code.LEASE_NOT_FOUND
                        ? "lease " + leaseHex(id) + " is lost: it was revoked or expired, and its keys are deleted"
                        : "lease " + leaseHex(id) + " may have expired: no keep-alive succeeded for a whole TTL ("
                                + reason.getMessage() + "); check 'rotactl endpoint status'");
            } finally {
                keepAlive.close();
            }
            return 0;
        }
    }

    /** {@code lease timetolive ID [--keys]}. */
    @Command(name = "timetolive", description = "Prints a lease's granted and remaining TTL (and its keys).")
    static final class TimeToLive extends ClientCommand {
        @Parameters(index = "0", paramLabel = "ID", converter = Conversions.LeaseIdConverter.class,
                description = "The lease ID (hex).")
        long id;

        @Option(names = "--keys", description = "Also list the keys attached to the lease.")
        boolean keys;

        @Override
        int run(RotaClient client, Printer printer) {
            try {
                printer.leaseTimeToLive(client.leases().timeToLive(id, keys), keys);
            } catch (RotaException e) {
                throw leaseFailure(e, id);
            }
            return 0;
        }
    }

    /** {@code lease list}. */
    @Command(name = "list", description = "Lists the IDs of all live leases.")
    static final class ListCommand extends ClientCommand {
        @Override
        int run(RotaClient client, Printer printer) {
            printer.leaseList(client.leases().list());
            return 0;
        }
    }
}
