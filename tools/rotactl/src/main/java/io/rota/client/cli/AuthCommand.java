package io.rota.client.cli;

import io.rota.client.RotaClient;
import picocli.CommandLine.Command;

/** {@code rotactl auth enable|disable|status}, as etcdctl's. */
@Command(name = "auth", description = "Auth commands: enable, disable, status.",
        subcommands = {AuthCommand.Enable.class, AuthCommand.Disable.class, AuthCommand.Status.class})
final class AuthCommand extends CommandGroup {

    AuthCommand() {
        super("name an auth command: enable, disable, status");
    }

    @Command(name = "enable", description = "Turns auth on: from then on every call needs a user (--user). Needs the"
            + " user root with the role root (user add root; user grant-role root root).")
    static final class Enable extends ClientCommand {
        @Override
        int run(RotaClient client, Printer printer) {
            client.auth().enable();
            printer.authChanged("Authentication enabled. Every command now needs --user NAME[:PASSWORD]"
                    + " (or ROTA_USER); administration needs --user root.");
            return 0;
        }
    }

    @Command(name = "disable", description = "Turns auth off (needs --user root).")
    static final class Disable extends ClientCommand {
        @Override
        int run(RotaClient client, Printer printer) {
            client.auth().disable();
            printer.authChanged("Authentication disabled: calls need no user.");
            return 0;
        }
    }

    @Command(name = "status", description = "Whether auth is on, and the auth revision.")
    static final class Status extends ClientCommand {
        @Override
        int run(RotaClient client, Printer printer) {
            printer.authStatus(client.auth().status());
            return 0;
        }
    }
}
