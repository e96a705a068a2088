package io.rota.client.cli;

import io.rota.client.RotaClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

import java.util.List;

/** {@code rotactl move-leader ID}: leadership transfer (Raft §3.10), as etcdctl's move-leader. */
@Command(name = "move-leader", description = "Hands leadership to voter ID and waits until it leads.")
final class MoveLeaderCommand extends ClientCommand {

    @Parameters(index = "0", paramLabel = "ID", description = "The voter to lead (see 'member list').")
    long id;

    @Override
    int run(RotaClient client, Printer printer) {
        long leader = client.cluster().moveLeader(id);
        printer.memberChanged("Leadership moved to member " + leader, leader, List.of());
        return 0;
    }
}
