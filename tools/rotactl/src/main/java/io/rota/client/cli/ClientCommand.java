package io.rota.client.cli;

import io.rota.client.RotaClient;
import io.rota.client.RotaException;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.util.concurrent.Callable;

import static io.rota.client.cli.Conversions.leaseHex;

/** A rotactl command that talks to the cluster: it gets a client and a printer, and returns its exit code. */
abstract class ClientCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @CommandLine.Option(names = {"-h", "--help"}, usageHelp = true, description = "Show this help.")
    boolean help;

    @Override
    public final Integer call() throws Exception {
        return root().withClient(spec, this::run);
    }

    /** Does the command's work; returns the exit code (a failure throws {@link CommandFailure}). */
    abstract int run(RotaClient client, Printer printer) throws Exception;

    final Rotactl root() {
        return (Rotactl) spec.root().userObject();
    }

    /** A usage error of this command (exit code 2). */
    final CommandLine.ParameterException usage(String message) {
        return new CommandLine.ParameterException(spec.commandLine(), message);
    }

    /** The failure to report when {@code e} says lease {@code id} does not exist; otherwise {@code e} itself. */
    static RuntimeException leaseFailure(RotaException e, long id) {
        if (e.code() == RotaException.Code.LEASE_NOT_FOUND) {
            return new CommandFailure("LEASE_NOT_FOUND", "lease " + leaseHex(id) + " not found: it was never granted, was revoked or"
                    + " expired (see 'rotactl lease list'; grant one with 'rotactl lease grant TTL')");
        }
        return e;
    }
}
