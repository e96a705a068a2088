package io.rota.client.cli;

import io.rota.client.RotaClient;
import picocli.CommandLine.Command;

import java.util.List;

/** {@code rotactl version} (and {@code rotactl --version}): rotactl's version and each reachable member's. */
@Command(name = "version", description = {"Prints rotactl's version and the server version of each endpoint "
        + "(from its status); a member that does not answer is listed with the reason.",
        "Always exits 0 when rotactl's version was printed: it reports, it does not check (see endpoint health)."})
final class VersionCommand extends ClientCommand {

    /** rotactl's version; it speaks the protocol of the servers of the same version. */
    static final String VERSION = "0.1.0";

    @Override
    int run(RotaClient client, Printer printer) {
        return print(client, printer, root().timeoutText());
    }

    /** Asks every endpoint for its status at once and prints the versions ({@code timeout}: for messages). */
    static int print(RotaClient client, Printer printer, String timeout) {
        List<Printer.StatusRow> rows = EndpointCommand.askEach(client.endpoints(), client.cluster()::statusAsync,
                (e, s) -> new Printer.StatusRow(e, s, null), (e, why) -> new Printer.StatusRow(e, null, why),
                timeout);
        printer.version(VERSION, rows);
        return 0;
    }
}
