package io.rota.client.cli;

import io.rota.client.RotaClient;
import picocli.CommandLine.Command;

/** {@code rotactl member list}. */
@Command(name = "member", description = "Member commands.", subcommands = MemberCommand.ListCommand.class)
final class MemberCommand extends CommandGroup {

    MemberCommand() {
        super("name a member command: list");
    }

    /** {@code member list}. */
    @Command(name = "list", description = "Lists the members that published their addresses: ID, status, name, "
            + "peer address, client address, whether a learner (never, in Rota).")
    static final class ListCommand extends ClientCommand {
        @Override
        int run(RotaClient client, Printer printer) {
            printer.memberList(client.cluster().members());
            return 0;
        }
    }
}
